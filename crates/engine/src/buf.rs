//! Memory-aligned I/O buffers (O_DIRECT needs buffers aligned to the logical sector).

/// Alignment of every buffer: enough for O_DIRECT on any logical sector size up to 4 KiB.
pub const BUF_ALIGN: usize = 4096;

/// A zero-initialised byte buffer whose start is aligned to [`BUF_ALIGN`].
/// Built on an over-allocated `Vec`, so no unsafe code is needed.
pub struct AlignedBuf {
    raw: Vec<u8>,
    off: usize,
    len: usize,
}

impl AlignedBuf {
    pub fn new(len: usize) -> AlignedBuf {
        let raw = vec![0u8; len + BUF_ALIGN];
        let off = raw.as_ptr().align_offset(BUF_ALIGN);
        AlignedBuf { raw, off, len }
    }

    /// As [`AlignedBuf::new`], but an allocation the system refuses is an error (naming
    /// the size) instead of an abort: for the I/O buffers, whose size the user chooses.
    pub fn try_new(len: usize) -> Result<AlignedBuf, String> {
        let mut raw = Vec::new();
        let total = len.checked_add(BUF_ALIGN).ok_or("I/O buffers too large")?;
        raw.try_reserve_exact(total).map_err(|_| {
            format!(
                "cannot allocate {} of I/O buffers",
                crate::size::human_bytes(len as u64)
            )
        })?;
        raw.resize(total, 0);
        let off = raw.as_ptr().align_offset(BUF_ALIGN);
        Ok(AlignedBuf { raw, off, len })
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn as_slice(&self) -> &[u8] {
        &self.raw[self.off..self.off + self.len]
    }
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.raw[self.off..self.off + self.len]
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn aligned() {
        for len in [1, 4096, 1 << 20] {
            let b = super::AlignedBuf::new(len);
            assert_eq!(b.as_slice().as_ptr() as usize % super::BUF_ALIGN, 0);
            assert_eq!(b.len(), len);
        }
    }
}

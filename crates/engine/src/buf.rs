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

/// The slots' I/O buffers, grown as the trace's I/Os need, within a memory budget.
pub(crate) struct SlotBuffers {
    pub(crate) slots: Vec<Option<AlignedBuf>>,
    bytes: usize,
    budget: usize,
}

impl SlotBuffers {
    pub(crate) fn new() -> SlotBuffers {
        let avail = crate::sys::meminfo_bytes("MemAvailable").unwrap_or(u64::MAX);
        SlotBuffers {
            slots: Vec::new(),
            bytes: 0,
            budget: (avail / 2).min(usize::MAX as u64) as usize,
        }
    }

    /// Slot `slot`'s buffer, at least `len` bytes (grown when too small).
    pub(crate) fn get(&mut self, slot: usize, len: usize) -> Result<&mut [u8], String> {
        if self.slots.len() <= slot {
            self.slots.resize_with(slot + 1, || None);
        }
        let b = &mut self.slots[slot];
        if b.as_ref().is_none_or(|b| b.len() < len) {
            let have = b.as_ref().map_or(0, |b| b.len());
            let want = len.next_multiple_of(4096);
            if self.bytes - have + want > self.budget {
                return Err(format!(
                    "the trace's reads and writes in flight need {} of buffers, more than half of the memory available; lower --max-outstanding",
                    crate::size::human_bytes((self.bytes - have + want) as u64)
                ));
            }
            *b = Some(AlignedBuf::try_new(want)?);
            self.bytes = self.bytes - have + want;
        }
        Ok(&mut b.as_mut().expect("just made").as_mut_slice()[..len])
    }
}

/// A backend's I/O buffers per slot: `slots` of `stride` bytes in one allocation (what
/// a ring registers), and for an I/O larger than the stride (a trace's) a buffer of its
/// own, grown as needed ([`SlotBuffers`]).
pub(crate) struct SlotArena {
    pub(crate) base: AlignedBuf,
    pub(crate) stride: usize,
    big: SlotBuffers,
}

impl SlotArena {
    pub(crate) fn new(slots: usize, stride: usize) -> Result<SlotArena, String> {
        Ok(SlotArena {
            base: AlignedBuf::try_new(stride * slots)?,
            stride,
            big: SlotBuffers::new(),
        })
    }

    /// Slot `slot`'s buffer of `len` bytes, and whether it lies in the base (registered
    /// as buffer `slot`).
    #[inline(always)]
    pub(crate) fn get(&mut self, slot: usize, len: usize) -> Result<(&mut [u8], bool), String> {
        if len <= self.stride {
            let off = slot * self.stride;
            return Ok((&mut self.base.as_mut_slice()[off..off + len], true));
        }
        Ok((self.big.get(slot, len)?, false))
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

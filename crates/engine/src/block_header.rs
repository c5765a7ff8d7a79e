//! The header a verifying run writes at the start of every block (`--verify`): after
//! the per-sector stamp of [`crate::data`] (8 bytes), a magic, the block's offset and
//! length, the job, the run's seed, the write's generation and a CRC-32C of the whole
//! block (its checksum field taken as absent). Written by the data path, read back by
//! [`crate::verify`].

/// "DLVERIFY" read as a little-endian u64.
pub const MAGIC: u64 = u64::from_le_bytes(*b"DLVERIFY");
/// Bytes the header takes at the start of a block (the sector stamp's 8 included).
pub const HEADER_BYTES: usize = 52;
pub(crate) const CRC_AT: usize = 48;

/// A block's header as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub offset: u64,
    pub len: u32,
    pub job: u32,
    pub seed: u64,
    pub generation: u64,
    pub crc: u32,
}

pub(crate) fn le64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

pub(crate) fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// CRC-32C of a block with its checksum field left out. `crc32c` uses the CPU's CRC32
/// instruction (SSE 4.2, ARMv8), so a block costs far less than its memcpy.
pub(crate) fn block_crc(block: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&block[..CRC_AT]), &block[CRC_AT + 4..])
}

/// Write the header into `block` (already filled and stamped by `data`).
#[inline]
pub fn seal(block: &mut [u8], offset: u64, seed: u64, job: u32, generation: u64) {
    block[8..16].copy_from_slice(&MAGIC.to_le_bytes());
    block[16..24].copy_from_slice(&offset.to_le_bytes());
    let len = block.len() as u32;
    block[24..28].copy_from_slice(&len.to_le_bytes());
    block[28..32].copy_from_slice(&job.to_le_bytes());
    block[32..40].copy_from_slice(&seed.to_le_bytes());
    block[40..48].copy_from_slice(&generation.to_le_bytes());
    let crc = block_crc(block);
    block[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
}

/// The header of a block, if it has drivelab's magic.
pub fn header(block: &[u8]) -> Option<Header> {
    (block.len() >= HEADER_BYTES && le64(block, 8) == MAGIC).then(|| Header {
        offset: le64(block, 16),
        len: le32(block, 24),
        job: le32(block, 28),
        seed: le64(block, 32),
        generation: le64(block, 40),
        crc: le32(block, CRC_AT),
    })
}

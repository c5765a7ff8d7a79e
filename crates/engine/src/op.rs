//! One I/O request as the generator produces it and a backend carries it out.

use serde::{Deserialize, Serialize};

/// Direction of an I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    Read,
    Write,
}

impl Dir {
    /// Index into per-direction arrays: read = 0, write = 1.
    #[inline]
    pub fn index(self) -> usize {
        match self {
            Dir::Read => 0,
            Dir::Write => 1,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Dir::Read => "read",
            Dir::Write => "write",
        }
    }
}

/// One I/O: direction, byte offset in the target and length in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoOp {
    pub dir: Dir,
    pub offset: u64,
    pub len: u32,
}

/// An I/O of any kind (flushes and discards too) as an open-loop source, a trace, hands it
/// to a backend ([`crate::source::IoSource`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnyOp {
    pub op: drivelab_trace::Op,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    /// A write that must be on stable media when it completes (RWF_DSYNC).
    pub fua: bool,
    /// The source's own mark, handed back with the completion (a trace's slot).
    pub tag: u32,
}

impl From<IoOp> for AnyOp {
    #[inline(always)]
    fn from(op: IoOp) -> AnyOp {
        AnyOp {
            op: match op.dir {
                Dir::Read => drivelab_trace::Op::Read,
                Dir::Write => drivelab_trace::Op::Write,
            },
            offset_bytes: op.offset,
            len_bytes: op.len as u64,
            fua: false,
            tag: 0,
        }
    }
}

impl AnyOp {
    /// The result of its success: the byte count of a read or write, 0 otherwise.
    /// The read or write it is, None for a flush or discard.
    #[inline(always)]
    pub fn rw(&self) -> Option<IoOp> {
        let dir = match self.op {
            drivelab_trace::Op::Read => Dir::Read,
            drivelab_trace::Op::Write => Dir::Write,
            _ => return None,
        };
        Some(IoOp {
            dir,
            offset: self.offset_bytes,
            len: self.len_bytes as u32,
        })
    }

    pub fn expected(&self) -> i64 {
        match self.op {
            drivelab_trace::Op::Read | drivelab_trace::Op::Write => self.len_bytes as i64,
            _ => 0,
        }
    }
}

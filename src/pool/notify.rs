//! The pool's waiting primitives live in `runtime::notify` (below the
//! coordination layer, which shares a realm-wide wake-up); re-exported here
//! under their old path.

pub use crate::runtime::notify::*;

//! What the library knows about JSON-RPC methods: cost, cacheability,
//! which parameter is the block tag, and which latency class a method
//! belongs to.

pub mod batch_match;
pub mod methods;
pub mod raw_tx;

pub use methods::{method_info, BlockTag, CachePolicy, MethodClass, MethodInfo};

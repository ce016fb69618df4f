//! The method table. Costs are compute units in the shape of Alchemy's
//! published table (the most widely used CU schedule), a sensible default
//! that endpoints override with their own `costs`.

use std::time::Duration;

/// Latency classes: an `eth_getLogs` is not an `eth_blockNumber`, so the
/// latency-based strategy keeps one EWMA per class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MethodClass {
    /// Head, chain id, gas price: tiny and fast.
    Cheap = 0,
    /// State reads and simulation.
    Call = 1,
    /// Logs, traces, block receipts: heavy.
    Heavy = 2,
    /// Submissions.
    Send = 3,
}

/// Number of method classes.
pub const CLASSES: usize = 4;

/// How a result may be cached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CachePolicy {
    /// Never (submissions, filters, anything with side effects or `pending`).
    Never,
    /// The result cannot change (chain id, a block by hash).
    Immutable,
    /// Depends on the block parameter: immutable for a number or hash,
    /// briefly for `latest`/`safe`/`finalized`, never for `pending`.
    ByBlock,
    /// Changes with the head: cache briefly.
    Head,
}

/// What a block parameter says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockTag {
    /// No block parameter (or the method has none).
    Absent,
    /// `latest`, `safe`, `finalized` or omitted where the default is latest.
    Latest,
    /// `pending`.
    Pending,
    /// `earliest`, a number or a hash: a fixed point of history.
    Pinned,
}

/// Everything the pool needs to know about one method.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MethodInfo {
    /// Latency class.
    pub class: MethodClass,
    /// Default cost in compute units.
    pub cost: f64,
    /// Cache policy.
    pub cache: CachePolicy,
    /// Index of the block parameter, if any.
    pub block_param: Option<usize>,
    /// Whether it only reads (safe to dedup and cache).
    pub read_only: bool,
    /// Whether a slow attempt may be raced by a second one: a known read
    /// that is not heavy (an unknown method might write; a heavy query's
    /// latency varies too much for a tail estimate to mean "stuck").
    pub hedge: bool,
    /// Whether it is a read this table knows by name: safe to send to a
    /// node whose chain is not verified yet, in one batch with the check
    /// (`pool/pipeline/chain_check.rs`); an unknown method might write.
    pub known_read: bool,
}

const fn m(
    class: MethodClass,
    cost: u32,
    cache: CachePolicy,
    block_param: Option<usize>,
    read_only: bool,
) -> MethodInfo {
    let hedge = read_only && !matches!(class, MethodClass::Heavy);
    MethodInfo { class, cost: cost as f64, cache, block_param, read_only, hedge, known_read: read_only }
}

/// The table; unknown methods are treated as uncacheable reads of 20 CU.
pub fn method_info(method: &str) -> MethodInfo {
    use CachePolicy::*;
    use MethodClass::*;
    match method {
        "eth_chainId" | "net_version" => m(Cheap, 0, Immutable, None, true),
        "eth_blockNumber" => m(Cheap, 10, Head, None, true),
        "eth_gasPrice" | "eth_maxPriorityFeePerGas" | "eth_blobBaseFee" => m(Cheap, 19, Head, None, true),
        "eth_feeHistory" => m(Cheap, 10, ByBlock, Some(1), true),
        "eth_getBalance" | "eth_getCode" => m(Call, 19, ByBlock, Some(1), true),
        "eth_getTransactionCount" => m(Call, 26, ByBlock, Some(1), true),
        "eth_getStorageAt" => m(Call, 17, ByBlock, Some(2), true),
        "eth_call" => m(Call, 26, ByBlock, Some(1), true),
        "eth_estimateGas" => m(Call, 87, ByBlock, Some(1), true),
        "eth_createAccessList" => m(Call, 87, ByBlock, Some(1), true),
        "eth_getBlockByNumber" => m(Call, 16, ByBlock, Some(0), true),
        "eth_getBlockByHash" | "eth_getBlockTransactionCountByHash" | "eth_getUncleCountByBlockHash" => {
            m(Call, 16, Immutable, None, true)
        }
        // Not immutable: a reorg can remove or move a receipt.
        "eth_getTransactionByHash" | "eth_getTransactionReceipt" => m(Call, 15, Head, None, true),
        "eth_getTransactionByBlockHashAndIndex" => m(Call, 15, Immutable, None, true),
        "eth_getTransactionByBlockNumberAndIndex" => m(Call, 15, ByBlock, Some(0), true),
        "eth_getProof" => m(Heavy, 21, ByBlock, Some(2), true),
        "eth_getLogs" => m(Heavy, 75, Never, None, true),
        "eth_getBlockReceipts" => m(Heavy, 500, ByBlock, Some(0), true),
        "eth_syncing" | "net_listening" | "net_peerCount" | "web3_clientVersion" => m(Cheap, 10, Head, None, true),
        "eth_sendRawTransaction" | "eth_sendRawTransactionSync" | "eth_sendTransaction" => {
            m(Send, 250, Never, None, false)
        }
        "eth_newFilter"
        | "eth_newBlockFilter"
        | "eth_newPendingTransactionFilter"
        | "eth_getFilterChanges"
        | "eth_getFilterLogs"
        | "eth_uninstallFilter"
        | "eth_subscribe"
        | "eth_unsubscribe" => m(Call, 20, Never, None, false),
        "eth_sign" | "eth_signTransaction" | "eth_signTypedData_v4" | "personal_sign" => {
            m(Send, 20, Never, None, false)
        }
        _ if method.starts_with("debug_") || method.starts_with("trace_") => {
            MethodInfo { known_read: false, ..m(Heavy, 309, Never, None, true) }
        }
        _ => MethodInfo { hedge: false, known_read: false, ..m(Call, 20, Never, None, true) },
    }
}

/// Reads a block parameter value (`"latest"`, `"0x10"`, a hash, or an
/// EIP-1898 object) into a tag.
pub fn block_tag(value: Option<&str>) -> BlockTag {
    match value {
        None | Some("latest") | Some("safe") | Some("finalized") => BlockTag::Latest,
        Some("pending") => BlockTag::Pending,
        Some(_) => BlockTag::Pinned,
    }
}

/// How long a result may be served from cache, or `None` for never.
pub fn cache_ttl(info: &MethodInfo, tag: BlockTag, latest_ttl: Duration, immutable_ttl: Duration) -> Option<Duration> {
    match (info.cache, tag) {
        (CachePolicy::Never, _) | (_, BlockTag::Pending) => None,
        (CachePolicy::Immutable, _) => Some(immutable_ttl),
        (CachePolicy::ByBlock, BlockTag::Pinned) => Some(immutable_ttl),
        (CachePolicy::ByBlock, _) | (CachePolicy::Head, _) => Some(latest_ttl),
    }
    .filter(|ttl| !ttl.is_zero())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn submissions_are_never_cached_nor_read_only() {
        for method in ["eth_sendRawTransaction", "eth_sendTransaction"] {
            let info = method_info(method);
            assert!(!info.read_only);
            assert_eq!(cache_ttl(&info, BlockTag::Absent, Duration::from_secs(1), Duration::from_secs(60)), None);
        }
    }

    #[test]
    fn cache_lifetimes_follow_the_block_tag() {
        let (short, long) = (Duration::from_secs(1), Duration::from_secs(300));
        let balance = method_info("eth_getBalance");
        assert_eq!(cache_ttl(&balance, block_tag(Some("latest")), short, long), Some(short));
        assert_eq!(cache_ttl(&balance, block_tag(Some("0x10")), short, long), Some(long));
        assert_eq!(cache_ttl(&balance, block_tag(Some("pending")), short, long), None);
        assert_eq!(cache_ttl(&method_info("eth_chainId"), BlockTag::Absent, short, long), Some(long));
        assert_eq!(cache_ttl(&method_info("eth_blockNumber"), BlockTag::Absent, Duration::ZERO, long), None);
        assert_eq!(cache_ttl(&method_info("eth_getLogs"), BlockTag::Pinned, short, long), None);
    }

    #[test]
    fn unknown_methods_are_uncached_reads() {
        let info = method_info("zk_getWhatever");
        assert_eq!((info.cache, info.read_only, info.cost), (CachePolicy::Never, true, 20.0));
        assert_eq!(method_info("debug_traceTransaction").class, MethodClass::Heavy);
    }
}

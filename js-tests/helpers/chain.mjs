// A realistic local chain for transaction tests: anvil already far past
// block 0 (every real chain is; our worst bug hid behind a fresh chain at
// block 0), with blocks on a timer (interval mining), behind the tx proxy.
// Tests that need automine or manual mining say why when they ask for it.
import { startAnvil } from './anvil.mjs';
import { startTxProxy } from './tx-proxy.mjs';

const hex = (n) => `0x${BigInt(n).toString(16)}`;

/**
 * Starts the chain. Options:
 *   mining     'interval' (default, a block every `blockTime` s), 'auto' (a block per transaction),
 *              'manual' (blocks only when the test mines them)
 *   blockTime  seconds between blocks for 'interval' (default 1)
 *   head       blocks mined at start with anvil_mine (default 1200)
 *   args       extra anvil flags (e.g. ['--chain-id', '5'])
 * Returns { url (the proxy), anvilUrl, proxy, rpc, head, waitForBlock, spikeBaseFeeAtNextSend, jamAtNextSend,
 *           unjam, stop }.
 */
export async function startChain({ mining = 'interval', blockTime = 1, head = 1200, args = [] } = {}) {
  const flags = mining === 'interval' ? ['--block-time', String(blockTime)] : mining === 'manual' ? ['--no-mining'] : [];
  const anvil = await startAnvil([...flags, ...args], { head });
  const rpc = async (method, params = []) => {
    const r = await fetch(anvil.url, { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    const body = await r.json();
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result;
  };
  const proxy = await startTxProxy(anvil.url);
  const blockNumber = async () => Number(await rpc('eth_blockNumber'));
  const intervalMs = blockTime * 1000;
  /** Forwards the next send with interval mining paused, then runs `change` before blocks resume: race-free. */
  const aroundNextSend = (change) => proxy.onNextSend(async (forward) => {
    if (mining === 'interval') await rpc('evm_setIntervalMining', [0]);
    try {
      const answer = await forward();
      await change();
      return answer;
    } finally {
      if (mining === 'interval') await rpc('evm_setIntervalMining', [blockTime]);
    }
  });
  return {
    url: proxy.url,
    anvilUrl: anvil.url,
    proxy,
    rpc,
    /** The head now. */
    head: blockNumber,
    /** Resolves once the head reaches `block` (bounded: 120 blocks' time). */
    async waitForBlock(block) {
      const until = Date.now() + 120 * intervalMs;
      while ((await blockNumber()) < block) {
        if (Date.now() > until) throw new Error(`block ${block} not reached`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    /**
     * A gas spike right after the next send reaches the node: the next block's base fee becomes `baseFee`
     * (wei), so a transaction paying less is evicted and cannot be mined until it is sped up.
     */
    spikeBaseFeeAtNextSend(baseFee) {
      aroundNextSend(() => rpc('anvil_setNextBlockBaseFeePerGas', [hex(baseFee)]));
    },
    /**
     * Congestion right after the next send reaches the node: blocks keep coming but none has room for a
     * transaction (gas limit below 21,000), so what is pooled stays pending until `unjam()`.
     */
    jamAtNextSend() {
      aroundNextSend(() => rpc('evm_setBlockGasLimit', ['0x5000']));
    },
    unjam: () => rpc('evm_setBlockGasLimit', ['0x1c9c380']),
    async stop() {
      await proxy.close();
      await anvil.stop();
    },
  };
}

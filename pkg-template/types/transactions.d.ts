// Types of breakwater-rpc: the transaction layer — requests, signers, options, outcomes.

import type { Eip1193Provider } from './options.js';

/** A wei amount or count: bigint, safe integer, or a 0x-hex / decimal string. Never a fractional number. */
export type Quantity = bigint | number | string;

/** Options of the transaction layer. Unknown keys are rejected. */
export interface TransactionOptions {
  /** Mean interval between receipt polls; each delay is drawn from [0.5, 1.5) × this. @default 4000 */
  pollIntervalMs?: number;
  /** Fee increase of each replacement in percent (≥ 10; results are always strictly above +10 %). @default 12 */
  bumpPercent?: number;
  /** Highest maxFeePerGas (or gasPrice) in wei any transaction may pay; replacements stop there. @default none */
  feeCeiling?: Quantity;
  /** Blocks (the receipt's own included) before a transaction counts as done. @default 1 */
  confirmations?: number;
  /** Re-broadcast the pending bytes to every endpoint every this many polls. @default 3 */
  rebroadcastEveryPolls?: number;
  /** Fill nonce gaps below our transactions with 0-value self-transfers. @default true */
  repairGaps?: boolean;
}

/** A transaction request. The nonce is always the relayer's; unknown fields are rejected. */
export interface TransactionRequest {
  to?: string | null;
  from?: string;
  value?: Quantity;
  data?: string;
  input?: string;
  /** Gas limit; estimated when absent. */
  gas?: Quantity;
  gasLimit?: Quantity;
  /** EIP-1559 fees; estimated (eth_feeHistory / eth_maxPriorityFeePerGas) when absent. */
  maxFeePerGas?: Quantity;
  maxPriorityFeePerGas?: Quantity;
  /** A legacy (type 0) transaction. */
  gasPrice?: Quantity;
  /** Must equal the relayer's chain if given; defaults to it (the `chainId` option, else the endpoints' chain). */
  chainId?: Quantity;
  type?: 0 | 2 | number | string;
}

/** An ethers v6 Signer (e.g. `Wallet`): keys stay in it. */
export interface EthersLikeSigner {
  getAddress(): Promise<string>;
  signTransaction(tx: object): Promise<string>;
}
/** A viem local account (`privateKeyToAccount`, `mnemonicToAccount`…). */
export interface ViemLikeAccount {
  address: string;
  type: 'local';
  /** Called with a complete EIP-1559 or legacy transaction (bigint fields). */
  signTransaction(tx: never): Promise<string>;
}
/**
 * A viem client with an account (`createWalletClient({ account, chain, transport })`): a local account signs
 * here and the relayer broadcasts; a JSON-RPC account (an address) lets the wallet behind the client send.
 * Its `chain`, when set, must be the relayer's.
 */
export interface ViemLikeWalletClient extends Eip1193Provider {
  account?: { address: string; type: string };
  chain?: { id: number } | null;
  extend: unknown;
  transport: object;
  uid: string;
}
/**
 * Anything the transaction calls accept as a signer; an EIP-1193 wallet sends with `eth_sendTransaction` from
 * its first `eth_accounts` entry. Never the node's accounts for a viem client: its own `account` decides.
 */
export type TransactionSigner = EthersLikeSigner | ViemLikeAccount | ViemLikeWalletClient | Eip1193Provider;

/** A JSON-RPC transaction receipt, as the node returned it (hex quantities). */
export interface RpcReceipt {
  transactionHash: string;
  blockHash: string;
  blockNumber: string;
  status?: string;
  from: string;
  to: string | null;
  gasUsed: string;
  effectiveGasPrice?: string;
  contractAddress?: string | null;
  logs: unknown[];
  [field: string]: unknown;
}

/** The receipt of whichever transaction took the nonce, plus what happened. */
export interface TxOutcome extends RpcReceipt {
  /** The receipt alone. */
  receipt: RpcReceipt;
  /** The mined hash. */
  hash: string;
  nonce: number;
  /** Every hash sent for the nonce, oldest first. */
  hashes: string[];
  /** mined: the original; replaced: a speed-up; cancelled: the cancel. */
  outcome: 'mined' | 'replaced' | 'cancelled';
  /** The mined transaction is not the original. */
  replaced: boolean;
  cancelled: boolean;
  /** Confirmations counted when the wait ended (the receipt's block included): at least the `confirmations` asked for. */
  confirmations: number;
}

/** Per-call transaction options. */
export interface SendOptions extends TransactionOptions {}

/** What `submitRaw` found. `unknown`: no settling answer; looked up and re-broadcast, watch the hash. */
export interface RawSubmission {
  hash: string;
  status: 'accepted' | 'unknown' | 'mined';
}

/** A nonce still watched, with every hash sent for it. */
export interface PendingTransaction {
  nonce: number;
  hashes: string[];
}

/** `resumeTransactions` options: the chain (default: the relayer's), the speed-up wait, transaction options. */
export interface ResumeOptions extends TransactionOptions {
  chainId?: number;
  maxWaitBlockCount?: number;
}

/** What `resumeTransactions` took over: each nonce with its journaled hashes and its outcome to come. */
export interface ResumedTransactions {
  adopted: Array<PendingTransaction & { outcome: Promise<TxOutcome> }>;
  /** Records that could not be read (another version, a tampered store): left live for a relayer that can. */
  unreadable: Array<{ nonce: number; reason: string }>;
}

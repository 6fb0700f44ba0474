// The books moved into the engine; this path stays for callers written before it.
export { MockTransactionBook, MockTransactionBooks } from './engine/mock-transaction-book.ts';

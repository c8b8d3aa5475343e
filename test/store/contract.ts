// The Store contract suite: MemoryStore and RedisStore must both pass every test in it.
import { accountsContract } from './contract-accounts.ts';
import { conversationsContract } from './contract-conversations.ts';
import { keysContract } from './contract-keys.ts';
import { ledgerContract } from './contract-ledger.ts';
import { overviewContract } from './contract-overview.ts';
import { limitsContract } from './contract-limits.ts';
import { noticesContract } from './contract-notices.ts';
import { signaturesContract } from './contract-signatures.ts';
import { spendContract } from './contract-spend.ts';
import { usageDaysContract } from './contract-usage-days.ts';
import type { MakeStore, Tap } from './fixtures.ts';

export type { MakeStore, Tap };

/** Registers the suite on `t`; `makeStore` must return a fresh, empty store on every call. */
export function contract(t: Tap, makeStore: MakeStore): void {
  keysContract(t, makeStore);
  limitsContract(t, makeStore);
  spendContract(t, makeStore);
  ledgerContract(t, makeStore);
  usageDaysContract(t, makeStore);
  accountsContract(t, makeStore);
  overviewContract(t, makeStore);
  conversationsContract(t, makeStore);
  signaturesContract(t, makeStore);
  noticesContract(t, makeStore);
}

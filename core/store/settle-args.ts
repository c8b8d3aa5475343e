// Validates settle's arguments the same way in both stores (a record must be whole before it is counted).
import type { Admission, UsageRecord } from './types.ts';

export function checkSettleArgs(record: UsageRecord, admission: Admission | undefined): void {
  if (typeof record.request_id !== 'string' || record.request_id === '') throw new Error('settle: record.request_id is required');
  if (typeof record.key_id !== 'string' || record.key_id === '') throw new Error('settle: record.key_id is required');
  if (typeof record.time !== 'number' || !Number.isFinite(record.time)) throw new Error('settle: record.time must be a number (ms)');
  if (typeof record.model !== 'string') throw new Error('settle: record.model must be a string');
  // The lease and tpm bucket live under the admission's key: a mismatch would release another key's slot.
  if (admission && admission.keyId !== record.key_id) {
    throw new Error(`settle: admission is for key ${admission.keyId}, record for ${record.key_id}`);
  }
}

// The Responses conversation state the bridge keeps for a client when the upstream is another vendor: a request continues
// the stored answer its previous_response_id names, and its own answer is kept unless it said store: false.
import { randomBytes } from 'node:crypto';
import type { ConversationState } from '../../../core/canonical.ts';
import { FORMAT } from './tables.ts';

export const state: ConversationState = {
  continues: (req) => {
    const id = req.extras[FORMAT]?.previous_response_id;
    return typeof id === 'string' && id !== '' ? id : undefined;
  },
  keeps: (req) => req.extras[FORMAT]?.store !== false,
  name: (req) => {
    const id = `resp_${randomBytes(24).toString('hex')}`;
    req.extras[FORMAT] = { ...req.extras[FORMAT], responseId: id };
    return id;
  },
};

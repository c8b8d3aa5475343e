// Prompt-caching hints both ways: Anthropic cache_control {type: "ephemeral", ttl?} ↔ canonical CacheHint.
import type { CacheHint } from '../../../core/canonical.ts';
import { isObj, type Obj } from './check.ts';

/** A block's or tool's cache_control as a canonical hint (spread into the canonical object). */
export function cacheHint(item: Obj): { cache?: CacheHint } {
  const cc = item.cache_control;
  if (!isObj(cc)) return {};
  return { cache: cc.ttl === '5m' || cc.ttl === '1h' ? { ttl: cc.ttl } : {} };
}

/** A canonical hint as cache_control (spread into the Anthropic object). */
export const cacheControl = (hint: CacheHint | undefined): { cache_control?: Obj } =>
  hint ? { cache_control: { type: 'ephemeral', ...(hint.ttl ? { ttl: hint.ttl } : {}) } } : {};

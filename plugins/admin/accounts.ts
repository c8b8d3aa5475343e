// Stage `admin-accounts`: every group's upstream accounts with their state, slots and recent failures (GET /admin/accounts),
// and a test request through one of them (POST /admin/accounts/{id}/test).
import { UNCAPPED } from '../../core/config-sections.ts';
import { adminErrors } from './errors.ts';
import type { AccountConfig, Ctx, Env, Plugin } from '../../core/types.ts';
import type { AccountState, UsageBucket } from '../../core/store/types.ts';
import { testAccount, testModel, type TestTarget } from './account-test.ts';
import { bodyValidator, reply } from './common.ts';
import { windowBuckets } from './summary.ts';

type Action = 'list' | 'test';
interface Options { action: Action; id_param: string; timeout_ms: number }

interface Failures { reasons: Record<string, number>; total: number; failovers: number }

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

/** ready, busy (every slot taken), cooling (until …), needs_attention (refused with 401/403), disabled. */
function stateOf(a: AccountConfig, s: AccountState | undefined): string {
  if (!a.enabled) return 'disabled';
  if (s?.coolingUntil !== undefined) return s.reason === 'auth' ? 'needs_attention' : 'cooling';
  return (s?.inFlight ?? 0) >= Math.max(1, a.concurrency) ? 'busy' : 'ready';
}

/** Why a disabled account is out of service, in words an operator can act on; null when it is enabled. */
function offView(a: AccountConfig) {
  if (!a.off) return null;
  const { reason, variables } = a.off;
  const message = reason === 'disabled' ? 'disabled: true in the configuration'
    : variables.length ? `no credential: set ${variables.join(' or ')}` : 'no credential: the configuration gives an empty one';
  return { reason, variables, message };
}

/** Failed attempts and failovers per group and account, summed over the window's buckets. */
function tally(buckets: UsageBucket[]): Map<string, Failures> {
  const out = new Map<string, Failures>();
  for (const b of buckets) {
    for (const a of b.attempts) {
      const id = JSON.stringify([a.group, a.account]);
      let f = out.get(id);
      if (!f) out.set(id, (f = { reasons: {}, total: 0, failovers: 0 }));
      f.reasons[a.reason] = (f.reasons[a.reason] ?? 0) + a.failures;
      f.total += a.failures;
      f.failovers += a.failovers;
    }
  }
  return out;
}

async function list(ctx: Ctx, env: Env): Promise<void> {
  const window = ctx.url.searchParams.get('window') || '1d';
  const now = Date.now();
  const failures = tally((await windowBuckets(env.store, window, now)).buckets);
  const groups = await Promise.all(Object.values(env.config.groups).map(async (group) => {
    const states = group.accounts.length ? await env.store.accountStates(group.name, group.accounts.map((a) => a.id), now) : [];
    return {
      name: group.name, platform: group.platform, dedicated: group.dedicated,
      accounts: group.accounts.map((account) => {
        const s = states.find((x) => x.id === account.id);
        const f = failures.get(JSON.stringify([group.name, account.id])) ?? { reasons: {}, total: 0, failovers: 0 };
        return {
          id: account.id, state: stateOf(account, s), disabled: offView(account), in_flight: s?.inFlight ?? 0, concurrency: account.concurrency === UNCAPPED ? null : account.concurrency,
          priority: account.priority, weight: account.weight, cooling_until: iso(s?.coolingUntil), cooldown_reason: s?.reason ?? null,
          probing: s?.probing ?? false, last_used: iso(s?.lastUsed), models: account.models ?? null,
          failures: f.reasons, failures_total: f.total, failovers: f.failovers, test_model: testModel({ group, account }) ?? null,
        };
      }),
    };
  }));
  reply(ctx, 200, { window, groups });
}

const readTestBody = bodyValidator({
  type: 'object', additionalProperties: false,
  properties: { group: { type: 'string', minLength: 1 }, model: { type: 'string', minLength: 1, maxLength: 200 } },
});

/** The account with this id; account ids are unique within a group, so another group's namesake needs `group`. */
function findAccount(env: Env, id: string, groupName: string | undefined): TestTarget {
  const found: TestTarget[] = [];
  for (const group of Object.values(env.config.groups)) {
    if (groupName !== undefined && group.name !== groupName) continue;
    const account = group.accounts.find((a) => a.id === id);
    if (account) found.push({ group, account });
  }
  if (!found.length) throw adminErrors.account_not_found({ id, group: groupName }, { param: 'id' });
  if (found.length > 1) {
    throw adminErrors.ambiguous_account({ id, groups: found.map((f) => f.group.name).join(', ') }, { param: 'group' });
  }
  return found[0];
}

async function test(ctx: Ctx, env: Env, id: string, timeoutMs: number): Promise<void> {
  const body = (await ctx.body()).length ? await readTestBody(ctx) as { group?: string; model?: string } : {};
  const target = findAccount(env, id, body.group);
  const result = await testAccount(env, target, body.model, timeoutMs);
  ctx.log.info({ group: result.group, account: result.account, status: result.status, duration_ms: result.duration_ms }, 'account tested');
  reply(ctx, 200, result);
}

export const adminAccounts: Plugin<Options> = {
  name: 'admin-accounts',
  description: 'Upstream accounts for the admin API: list (every group\'s accounts: state, why a disabled one is off, slots in use, failed attempts by reason and failovers over ?window= 1h, 1d, 7d or 30d, default 1d) or test (one minimal request of the platform\'s format through that account\'s credential and base URL, billed to no key; body {group, model}, both optional). Place after admin-auth.',
  schema: {
    type: 'object', additionalProperties: false, required: ['action'],
    properties: {
      action: { type: 'string', enum: ['list', 'test'], description: 'What this route does.' },
      id_param: { type: 'string', default: 'id', description: 'Path parameter holding the account id (test).' },
      timeout_ms: { type: 'integer', minimum: 100, default: 20_000, description: 'test: longest wait for the upstream\'s whole answer.' },
    },
  },
  create(options, env) {
    return async (ctx) => (options.action === 'list' ? list(ctx, env) : test(ctx, env, ctx.params[options.id_param] ?? '', options.timeout_ms));
  },
};

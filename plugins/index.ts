// The list of stages that gateway.yaml may name (read only by app/registry.ts).
import type { Plugin } from '../core/types.ts';
import { auth } from './auth.ts';
import { groupCheck } from './group-check.ts';
import { listModels } from './list-models/index.ts';
import { modelAllowlist } from './model-allowlist.ts';
import { proxy } from './proxy/index.ts';
import { rateLimit } from './rate-limit.ts';
import { metering } from './metering/index.ts';
import { usage } from './usage.ts';
import { adminAuth } from './admin/auth.ts';
import { adminKeys } from './admin/keys.ts';
import { adminKeyUsage } from './admin/key-usage.ts';
import { adminUsage } from './admin/records.ts';
import { adminSummary } from './admin/summary.ts';
import { adminGroups } from './admin/groups.ts';
import { adminAccounts } from './admin/accounts.ts';
import { adminNotifications } from './admin/notifications.ts';
import { page } from './page.ts';
import { docs } from './docs.ts';

export const plugins: Plugin[] = [auth, groupCheck, modelAllowlist, rateLimit, metering, proxy, listModels, usage, adminAuth, adminKeys, adminKeyUsage, adminUsage, adminSummary, adminGroups, adminAccounts, adminNotifications, page, docs];

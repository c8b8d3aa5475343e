// The list of stages that gateway.yaml may name (read only by core/registry.ts).
import type { Plugin } from '../core/types.ts';
import { auth } from './auth.ts';
import { groupCheck } from './group-check.ts';
import { listModels } from './list-models.ts';
import { modelAllowlist } from './model-allowlist.ts';
import { proxy } from './proxy/index.ts';

export const plugins: Plugin[] = [auth, groupCheck, modelAllowlist, proxy, listModels];

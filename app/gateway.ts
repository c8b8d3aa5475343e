// The gateway as it ships: core's server composed with the registry's stages, formats and built-in simulator.
import { startGateway as startComposed, type Gateway as ComposedGateway, type GatewayOptions } from '../core/server.ts';
import type { Simulator } from '../simulator/server.ts';
import { parts } from './registry.ts';

export type Gateway = ComposedGateway<Simulator>;
export type { GatewayOptions };

export const startGateway = (opts: GatewayOptions): Promise<Gateway> => startComposed(opts, parts);

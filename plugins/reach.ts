// Which client formats reach a group: the one rule, read by group-check (may this route serve the group?) and by list-models
// (which models does a format's list show?).
import type { PlatformConfig } from '../core/types.ts';

/**
 * A format reaches a group when the group's platform serves it natively. Translation between formats widens this
 * rule, and only here: every caller follows.
 */
export const formatReaches = (platform: PlatformConfig, format: string): boolean => platform.formats?.includes(format) === true;

import { describe, expect, it } from 'vitest';
import { nextAction, tradingEnabled } from '../../src/auth/service-ladder.ts';
import { roleAllows } from '../../src/auth/roles.ts';

describe('the service ladder', () => {
  it('has one next action per stage, and none once live', () => {
    expect(nextAction('none')).toBe('request_access');
    expect(nextAction('requested')).toBe('enable_sandbox');
    expect(nextAction('sandbox')).toBe('go_live');
    expect(nextAction('live')).toBeNull();
  });

  it('lets test keys trade from the sandbox stage and live keys only at live', () => {
    expect([tradingEnabled('none', 'test'), tradingEnabled('requested', 'test'), tradingEnabled('sandbox', 'test'), tradingEnabled('live', 'test')]).toEqual([false, false, true, true]);
    expect([tradingEnabled('none', 'live'), tradingEnabled('requested', 'live'), tradingEnabled('sandbox', 'live'), tradingEnabled('live', 'live')]).toEqual([false, false, false, true]);
  });
});

describe('roleAllows', () => {
  it('lets admin do everything, each other role its own area, and every role the routes with no area', () => {
    for (const area of ['finance', 'engineering', 'admin', undefined] as const) expect(roleAllows('admin', area)).toBe(true);
    expect(roleAllows('finance', 'finance')).toBe(true);
    expect(roleAllows('finance', 'engineering')).toBe(false);
    expect(roleAllows('finance', 'admin')).toBe(false);
    expect(roleAllows('engineering', 'engineering')).toBe(true);
    expect(roleAllows('engineering', 'finance')).toBe(false);
    expect(roleAllows('engineering', undefined)).toBe(true);
  });
});

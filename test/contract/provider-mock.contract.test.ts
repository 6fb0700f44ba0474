import express from 'express';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMock, describeMock, registration } from '../../src/provider-registry.ts';
import { RailError } from '../../src/rails/provider-port.ts';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';
import { mockContractCases } from '../support/provider-contract-cases.ts';
import { engineWorld, serve } from '../unit/mock-engine/engine-fixture.ts';

// What every provider mock promises, whatever its upstream's wire: one case per provider of
// src/providers/index.ts.
const cases = mockContractCases();

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startTestSandbox({}, []);
});
afterAll(() => sb.close());

describe.each(cases)('the $name mock', (c) => {
  it('is mounted at /mocks/<its id> and tells its users its base URL and every credential it takes, and where', () => {
    const view = describeMock(c.name, sb.ry.config, { baseUrl: sb.baseUrl, realUpstream: false });
    expect(view.provider).toBe(c.name);
    expect(view.base_url).toBe(`${sb.baseUrl}/mocks/${c.name}`);
    expect(view.credentials.length).toBeGreaterThan(0);
    for (const credential of view.credentials) {
      expect(credential.name).toMatch(/\S/);
      expect(credential.where).toMatch(/\S/);
      expect(credential.value).toMatch(/\S/);
    }
  });

  it("hides its secret values when the adapter talks to a real upstream (they are that upstream's)", () => {
    const real = describeMock(c.name, sb.ry.config, { baseUrl: sb.baseUrl, realUpstream: true });
    expect(real.credentials.some((credential) => credential.value === null)).toBe(true);
  });

  it("is served on its own (as `railyard mock <id>` serves it): its adapter's example call is accepted, and refused while the provider is marked down", async () => {
    const { ctx } = await engineWorld();
    const server = await serve(express().use(`/mocks/${c.name}`, createMock(c.name, ctx, sb.ry.config)));
    try {
      const adapter = registration(c.name).adapter(sb.ry.config, { selfBaseUrl: () => server.base, uuid: () => randomUUID(), timeoutMs: 5_000, clock: ctx.clock });
      const call = (reference: string) => (c.examples.payout ? adapter.payout(c.examples.payout(reference)) : adapter.collect(c.examples.collect!(reference)));
      const accepted = await call('trf_mockcontract000000000001');
      expect(accepted.providerReference).toMatch(/\S/);
      await ctx.health.setDown(c.name, true);
      const refused = await call('trf_mockcontract000000000002').catch((e) => e);
      expect(refused).toBeInstanceOf(RailError);
      expect(refused.failsOver).toBe(true);
    } finally {
      await server.close();
    }
  });
});

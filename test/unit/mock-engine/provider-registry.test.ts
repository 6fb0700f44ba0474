import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { mockAccessView, mockBannerLines, mockPath } from '../../../src/mocks/mock-definition.ts';
import { createMock, describeMock, PROVIDERS, registration, UnknownProviderError } from '../../../src/provider-registry.ts';
import type { RailAdapterContext } from '../../../src/rails/provider-port.ts';
import { NoWireProfileError, wireProfileFor } from '../../../src/recorder/wire-profiles.ts';
import { VirtualClock, VIRTUAL_EPOCH } from '../../../src/kernel/clock.ts';
import { engineWorld, serve } from './engine-fixture.ts';
import { buildConfig } from '../../../src/railyard-config.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const adapterCtx: RailAdapterContext = { selfBaseUrl: () => 'http://127.0.0.1:4010', uuid: () => '00000000-0000-4000-8000-000000000000', timeoutMs: 100, clock: new VirtualClock(VIRTUAL_EPOCH) };

describe('the provider registry', () => {
  it('registers every configured provider once, each with an adapter and a mock of the same name', () => {
    const config = buildConfig();
    expect(PROVIDERS.map((p) => p.name)).toEqual(['mtn-momo', 'hubtel', 'bank-rail', 'paystack', 'card-processor', 'direct-debit', 'bills']);
    expect(PROVIDERS.map((p) => p.name).sort()).toEqual(Object.keys(config.providers).sort());
    for (const p of PROVIDERS) {
      expect(p.mock.name).toBe(p.name);
      const adapter = p.adapter(config, adapterCtx);
      expect(adapter.name).toBe(p.name);
      expect(adapter.baseUrl()).toBe(`http://127.0.0.1:4010${mockPath(p.name)}`);
    }
  });

  it('configures adapters from their block of config.providers', () => {
    const config = buildConfig({ providers: { 'bank-rail': { base_url: 'https://gip.example.test/' } } });
    expect(registration('bank-rail').adapter(config, adapterCtx).baseUrl()).toBe('https://gip.example.test');
  });

  it('names the providers it knows when asked for one it does not', () => {
    expect(() => registration('acme')).toThrow(UnknownProviderError);
    expect(() => registration('acme')).toThrow('unknown provider "acme"; known: mtn-momo, hubtel, bank-rail, paystack, card-processor, direct-debit');
  });

  it('tells a provider it does not know from a known one the recorder cannot record, by two names', () => {
    expect(registration('card-processor').name).toBe('card-processor');
    expect(() => wireProfileFor('card-processor')).toThrow(NoWireProfileError);
    expect(() => wireProfileFor('card-processor')).toThrow('no recorder for provider "card-processor": one of mtn-momo, hubtel, bank-rail, paystack');
    expect(new NoWireProfileError('acme').name).not.toBe(new UnknownProviderError('acme').name);
  });

  it('builds a mock by name with the credentials configured for it, ready to serve on its own', async () => {
    const { ctx } = await engineWorld();
    const config = buildConfig({ providers: { hubtel: { client_id: 'my-client', client_secret: 'my-secret' } } });
    const app = express().use(createMock('hubtel', ctx, config));
    const server = await serve(app);
    closers.push(server.close);
    const verify = (auth: string) =>
      fetch(`${server.base}/rnv/v2/merchantaccount/merchants/2017101/mobilemoney/verify?channel=mtn-gh&customerMsisdn=233241234567`, {
        headers: { Authorization: `Basic ${Buffer.from(auth).toString('base64')}` },
      });
    expect((await verify('railyard-hubtel-client:railyard-hubtel-secret')).status).toBe(401);
    const ok = await verify('my-client:my-secret');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ responseCode: '0000', data: { isRegistered: true } });
  });

  it("describes a mock's access from the configuration", () => {
    const view = describeMock('bank-rail', buildConfig({ providers: { 'bank-rail': { client_id: 'p-1' } } }), { baseUrl: 'http://h:1/', realUpstream: false });
    expect(view).toEqual({
      provider: 'bank-rail',
      base_url: 'http://h:1/mocks/bank-rail',
      credentials: [
        { name: 'participant id', where: 'X-Participant-Id header on every call', value: 'p-1' },
        { name: 'signing secret', where: 'HMAC-SHA256 key of the X-Signature header', value: 'railyard-bank-secret' },
      ],
      notes: [expect.stringContaining('X-Signature: hex HMAC-SHA256(secret')],
    });
  });
});

describe("a mock's access", () => {
  const access = {
    credentials: [
      { name: 'client id', where: 'Basic user', value: 'id-1', secret: false },
      { name: 'client secret', where: 'Basic password', value: 's3cret', secret: true },
    ],
    notes: ['hosts are path prefixes'],
  };

  it('shows every value while the adapter talks to the mock', () => {
    expect(mockAccessView('acme', access, { baseUrl: 'http://127.0.0.1:4010', realUpstream: false }).credentials.map((c) => c.value)).toEqual(['id-1', 's3cret']);
  });

  it('hides secret values, and says why, while the adapter uses the same values against a real upstream', () => {
    const view = mockAccessView('acme', access, { baseUrl: 'http://127.0.0.1:4010', realUpstream: true });
    expect(view.credentials.map((c) => c.value)).toEqual(['id-1', null]);
    expect(view.notes[0]).toMatch(/not shown/);
    expect(JSON.stringify(view)).not.toContain('s3cret');
  });

  it('prints as banner lines: base URL, then name, value and where, aligned, then the notes', () => {
    const lines = mockBannerLines([mockAccessView('acme', access, { baseUrl: 'http://127.0.0.1:4010', realUpstream: true })], '  ');
    expect(lines).toEqual([
      '  acme             http://127.0.0.1:4010/mocks/acme',
      '                   client id      id-1         (Basic user)',
      '                   client secret  (not shown)  (Basic password)',
      expect.stringMatching(/^ {19}- Secret values are not shown/),
      '                   - hosts are path prefixes',
    ]);
  });
});

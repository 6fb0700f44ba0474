import { describe, expect, it } from 'vitest';
import { bodyMatchers, itemTemplate, redactSecrets, references, requestBody, stateExpression, stateVariable, REDACTED } from '../../src/contracts/body-matchers.ts';

// pact-js matchers are plain objects: { 'pact:matcher:type': ..., value, regex?, format? }.
type Matcher = { 'pact:matcher:type': string; value: unknown; regex?: string; format?: string; min?: number };
const m = (v: unknown) => v as Matcher;

describe('bodyMatchers: what a contract promises about a body', () => {
  const charge = {
    status: true,
    data: {
      id: 'chg_01kdvdna0009vwqqcan9',
      object: 'charge',
      status: 'pending_provider',
      amount: 10000,
      rate: 15.25,
      livemode: false,
      provider: 'hubtel',
      created_at: '2026-01-01T00:00:00.000Z',
      failure_reason: null,
    },
  };

  it('keeps asserted values and enum-like fields exact', () => {
    const out = bodyMatchers(charge, { exact: { data: { provider: 'hubtel', amount: 10000 } } }) as { data: Record<string, unknown> };
    expect(out.data.provider).toBe('hubtel');
    expect(out.data.amount).toBe(10000);
    expect(out.data.status).toBe('pending_provider');
    expect(out.data.object).toBe('charge');
    expect(out.data.failure_reason).toBeNull();
  });

  it('matches the rest by type: amounts as integers, rates as numbers, booleans, strings', () => {
    const out = bodyMatchers(charge) as { status: unknown; data: Record<string, unknown> };
    expect(m(out.data.amount)['pact:matcher:type']).toBe('integer');
    expect(m(out.data.rate)['pact:matcher:type']).toBe('number');
    expect(m(out.data.livemode)['pact:matcher:type']).toBe('type');
    expect(m(out.status)['pact:matcher:type']).toBe('type');
    expect(m(out.data.provider)).toMatchObject({ 'pact:matcher:type': 'type', value: 'hubtel' });
  });

  it('matches ids by their prefix and timestamps by format', () => {
    const out = bodyMatchers(charge) as { data: Record<string, unknown> };
    expect(m(out.data.id)).toMatchObject({ 'pact:matcher:type': 'regex', regex: '^chg_[0-9a-z]+$', value: charge.data.id });
    expect(m(out.data.created_at)).toMatchObject({ 'pact:matcher:type': 'timestamp', format: "yyyy-MM-dd'T'HH:mm:ss.SSSX" });
  });

  it('matches ids by type in message bodies, where pact_ffi fails regexes', () => {
    const out = bodyMatchers({ data: { object: { id: 'chg_01kdvdna0009vwqqcan9' } } }, { message: true }) as { data: { object: { id: unknown } } };
    expect(m(out.data.object.id)['pact:matcher:type']).toBe('type');
  });

  it('promises each item of a list by the fields every item has', () => {
    const out = bodyMatchers({
      history: [
        { status: 'a', note: null, at: 1 },
        { status: 'b', note: 'flagged', at: 2 },
      ],
    }) as { history: Matcher };
    expect(out.history['pact:matcher:type']).toBe('type');
    expect(out.history.min).toBe(1);
    expect(Object.keys(out.history.value as object[])).toHaveLength(1);
    const item = (out.history.value as Record<string, unknown>[])[0]!;
    expect(Object.keys(item).sort()).toEqual(['at', 'status']);
  });

  it("matches a list's field of ids of several kinds as any id (a report's lines name collections and payouts)", () => {
    const out = bodyMatchers({ lines: [{ object_id: 'col_01kdvdna0009vwqqcan9' }, { object_id: 'po_01kdvdnew808hbxxyec7' }] }) as { lines: Matcher };
    const item = (out.lines.value as Record<string, unknown>[])[0]!;
    expect(m(item.object_id)).toMatchObject({ 'pact:matcher:type': 'regex', regex: '^[a-z]+_[0-9a-z]+$', value: 'col_01kdvdna0009vwqqcan9' });
    const same = bodyMatchers({ lines: [{ object_id: 'po_01kdvdna0009vwqqcan9' }, { object_id: 'po_01kdvdnew808hbxxyec7' }] }) as { lines: Matcher };
    expect(m((same.lines.value as Record<string, unknown>[])[0]!.object_id)).toMatchObject({ regex: '^po_[0-9a-z]+$' });
  });

  it('promises an empty list only as a list', () => {
    const out = bodyMatchers({ items: [] }) as { items: Matcher };
    expect(out.items).toMatchObject({ 'pact:matcher:type': 'type', value: [] });
  });

  it('never carries a secret: secret-like keys get a placeholder', () => {
    const out = bodyMatchers({ data: { secret: 'whsec_abc', access_token: 'eyJ' } }) as { data: Record<string, unknown> };
    expect(m(out.data.secret).value).toBe(REDACTED);
    expect(m(out.data.access_token).value).toBe(REDACTED);
    expect(redactSecrets({ apiKey: 'k', nested: [{ client_secret: 's', name: 'n' }] })).toEqual({ apiKey: REDACTED, nested: [{ client_secret: REDACTED, name: 'n' }] });
  });
});

describe('numbers', () => {
  it('matches a whole rate or price as any number, and every number in a provider wire format', () => {
    const out = bodyMatchers({ usd_price: 1, fx_rate: 15, amount: 100 }) as Record<string, Matcher>;
    expect(out.usd_price!['pact:matcher:type']).toBe('number');
    expect(out.fx_rate!['pact:matcher:type']).toBe('number');
    expect(out.amount!['pact:matcher:type']).toBe('integer');
    const hubtel = bodyMatchers({ Data: { Amount: 100, Charges: 1 } }, { providerUnits: true }) as { Data: Record<string, Matcher> };
    expect(hubtel.Data.Amount!['pact:matcher:type']).toBe('number');
  });
});

describe('itemTemplate', () => {
  it('leaves out fields missing or of another type in some items, and merges nested objects', () => {
    expect(
      itemTemplate([
        { a: 1, b: 'x', c: { d: 1, e: null } },
        { a: 2, c: { d: 2, e: 'y' } },
      ]),
    ).toEqual({ a: 1, c: { d: 1 } });
  });
  it('takes the first item of a list of non-objects', () => {
    expect(itemTemplate(['x', 'y'])).toBe('x');
  });
});

describe('script references as provider-state values', () => {
  it('names each reference as a state variable', () => {
    expect(stateVariable('charge.body.data.id')).toBe('charge_body_data_id');
    expect(stateVariable(' quote.body.data.items[0].id ')).toBe('quote_body_data_items_0__id');
    expect(stateExpression('/api/v1/charges/${charge.body.data.id}')).toBe('/api/v1/charges/${charge_body_data_id}');
  });

  it('finds references in paths and bodies', () => {
    expect(references({ quote_id: '${quote.body.data.id}', n: 1, list: ['${a.b}'] })).toEqual(['quote.body.data.id', 'a.b']);
    expect(references('/plain')).toEqual([]);
  });

  it('turns referenced body values into provider-state generators and keeps the rest as examples', () => {
    const out = requestBody({ quote_id: 'qt_1', amount: 5 }, { quote_id: '${quote.body.data.id}', amount: 5 }) as Record<string, unknown>;
    expect(out.amount).toBe(5);
    expect(out.quote_id).toMatchObject({ 'pact:matcher:type': 'type', 'pact:generator:type': 'ProviderState', expression: '${quote_body_data_id}', value: 'qt_1' });
  });
});

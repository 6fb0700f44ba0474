// The Sandbox page shows how far a background clock advance has got, and its script follows it:
// the progress fragment it polls reads GET /api/v1/sandbox/clock/advances/{id} until it ends.
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startTestSandbox();
});
afterAll(async () => {
  await sb?.close();
});

const csrfOf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';

async function signedIn() {
  const agent = supertest.agent(sb.baseUrl);
  const form = await agent.get('/dashboard/sign-in');
  expect(
    (
      await agent
        .post('/dashboard/sign-in')
        .type('form')
        .send({ csrf: csrfOf(form.text), api_key: sb.key })
    ).status,
  ).toBe(303);
  return { agent, csrf: csrfOf((await agent.get('/dashboard/sandbox')).text) };
}

describe('the Sandbox page and a background advance', () => {
  it('advances in the background on request and shows the progress, which its fragment follows to the end', async () => {
    for (let i = 0; i < 4; i++) expect((await sb.charge({ amount: 1000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' })).status).toBe(201);
    const { agent, csrf } = await signedIn();
    const form = (await agent.get('/dashboard/sandbox')).text;
    expect(form).toContain('id="advance-background"');

    const posted = await agent.post('/dashboard/sandbox/clock').type('form').send({ csrf, seconds: '10', background: '1' });
    expect(posted.status).toBe(303);
    const location = posted.headers.location as string;
    expect(location).toMatch(/^\/dashboard\/sandbox\?advance=adv_\d+_\d+$/);
    const page = (await agent.get(location)).text;
    expect(page).toMatch(/<div id="flash" class="flash ok"[^>]*>Advancing 10 s in the background: \d+ job\(s\) due\./);
    const id = location.split('=')[1]!;
    expect(page).toContain(`<div id="advance-progress" data-poll-fragment="/dashboard/sandbox/advances/${id}"`);
    expect(page).toMatch(/<progress id="advance-bar" max="\d+" value="\d+"/);

    let fragment = '';
    for (let i = 0; i < 200 && !fragment.includes('data-advance-state="succeeded"'); i++) {
      const res = await agent.get(`/dashboard/sandbox/advances/${id}`);
      expect(res.status).toBe(200);
      fragment = res.text;
      if (!fragment.includes('data-advance-state="succeeded"')) await new Promise((done) => setTimeout(done, 20));
    }
    // One callback per charge (more should a slow machine make a provider call time out), all run.
    const [, done, total] = /<strong id="advance-count">(\d+) of (\d+) job\(s\)<\/strong> \(100%\)/.exec(fragment)!;
    expect(done).toBe(total);
    expect(Number(done)).toBeGreaterThanOrEqual(4);
    expect(fragment).toContain(`<progress id="advance-bar" max="${total}" value="${done}"`);
    expect((await sb.get('/api/v1/sandbox/clock')).body.data.now).toBe('2026-01-01T00:00:10.000Z');
  });

  it('answers a small advance at once, as before, when not asked for the background', async () => {
    const { agent, csrf } = await signedIn();
    const posted = await agent.post('/dashboard/sandbox/clock').type('form').send({ csrf, seconds: '60' });
    expect(posted.headers.location).toBe('/dashboard/sandbox');
    expect((await agent.get('/dashboard/sandbox')).text).toMatch(/class="flash ok"[^>]*>Advanced 60 s: now /);
  });

  it('shows nothing for an advance the API does not know', async () => {
    const { agent } = await signedIn();
    expect((await agent.get('/dashboard/sandbox/advances/adv_9_9')).status).toBe(404);
    expect((await agent.get('/dashboard/sandbox?advance=adv_9_9')).text).toMatch(/The advance could not be read/);
  });
});

import { describe, expect, it } from 'vitest';
import { AdvanceProgressView, parseDuration } from '../../src/cli/clock-command.ts';

describe('railyard clock advance: durations', () => {
  it.each([
    ['90s', 90],
    ['15m', 900],
    ['24h', 86_400],
    ['1d', 86_400],
    ['1h30m', 5_400],
    ['1500ms', 1.5],
    ['45', 45],
    ['2.5h', 9_000],
  ])('reads %s as %d seconds', (text, seconds) => {
    expect(parseDuration(text)).toBe(seconds);
  });

  it.each(['', 'soon', '-5m', '5 m', '1w', 'h'])('refuses %j', (text) => {
    expect(parseDuration(text)).toBeNull();
  });
});

const running = (done: number, total: number) => ({ id: 'adv_1_1', state: 'running' as const, from: 'a', to: 'b', jobs_done: done, jobs_total: total, error: null });

function screen(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, out: { isTTY, columns: 80, write: (t: string) => writes.push(t) } };
}

describe('railyard clock advance: progress', () => {
  it('redraws a coloured bar in place on a terminal', () => {
    const { writes, out } = screen(true);
    const view = new AdvanceProgressView(out, {});
    view.update(running(25, 100));
    view.end();
    expect(writes[0]).toMatch(/^\r\[\x1b\[32m#{10}\x1b\[2m-{30}\x1b\[0m\]  25% 25\/100 job\(s\)/);
    expect(writes[1]).toBe('\n');
  });

  it('draws the bar without ANSI colour when NO_COLOR is set', () => {
    const { writes, out } = screen(true);
    new AdvanceProgressView(out, { NO_COLOR: '1' }).update(running(50, 100));
    expect(writes[0]).toBe(`\r[${'#'.repeat(20)}${'-'.repeat(20)}]  50% 50/100 job(s)  `);
  });

  it('prints plain lines off a terminal, at most one a second while running, and always the end', () => {
    const { writes, out } = screen(false);
    let t = 0;
    const view = new AdvanceProgressView(out, {}, () => t);
    view.update(running(0, 10));
    t = 200;
    view.update(running(4, 10));
    t = 1_100;
    view.update(running(5, 10));
    view.update({ ...running(10, 10), state: 'succeeded' });
    view.end();
    expect(writes).toEqual(['advancing: 0/10 job(s) (0%)\n', 'advancing: 5/10 job(s) (50%)\n', 'succeeded: 10/10 job(s) (100%)\n']);
  });
});

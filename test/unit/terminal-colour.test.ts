import { describe, expect, it } from 'vitest';
import { ansiFilter, colourWanted, stripAnsi } from '../../src/cli/terminal-colour.ts';

const ESC = String.fromCharCode(27);
const tty = { isTTY: true };
const pipe = { isTTY: false };

describe('colourWanted', () => {
  it('colours a terminal only: not a pipe or a file, not a dumb terminal, not with NO_COLOR; FORCE_COLOR forces them', () => {
    expect(colourWanted(tty, {})).toBe(true);
    expect(colourWanted(pipe, {})).toBe(false);
    expect(colourWanted({}, {})).toBe(false);
    expect(colourWanted(tty, { TERM: 'dumb' })).toBe(false);
    expect(colourWanted(tty, { NO_COLOR: '1' })).toBe(false);
    expect(colourWanted(tty, { NO_COLOR: '' })).toBe(true);
    expect(colourWanted(pipe, { FORCE_COLOR: '1' })).toBe(true);
    expect(colourWanted(pipe, { FORCE_COLOR: '' })).toBe(true);
    expect(colourWanted(tty, { FORCE_COLOR: '0' })).toBe(false);
    expect(colourWanted(pipe, { FORCE_COLOR: '1', NO_COLOR: '1' })).toBe(true);
  });
});

describe('ansiFilter', () => {
  it('removes ANSI codes from streamed text, even one split across two chunks', () => {
    const out: string[] = [];
    const filter = ansiFilter((t) => out.push(t), false);
    filter.write(`has status code ${ESC}[1m200${ESC}`);
    filter.write(`[0m (${ESC}[32mOK${ESC}[0m)\nnext `);
    filter.write('line');
    filter.end();
    expect(out.join('')).toBe('has status code 200 (OK)\nnext line');
  });

  it('passes the text as it is when colours are wanted', () => {
    const out: string[] = [];
    ansiFilter((t) => out.push(t), true).write(`${ESC}[32mOK${ESC}[0m`);
    expect(out).toEqual([`${ESC}[32mOK${ESC}[0m`]);
    expect(stripAnsi(`${ESC}[1;31mred${ESC}[0m`)).toBe('red');
  });
});

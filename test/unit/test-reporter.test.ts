import { describe, expect, it } from 'vitest';
import { jsonDocument, junitXml, summariseRun, xmlEscape, type TestRun } from '../../src/cli/test-reporter.ts';
import { parseXml, type XmlElement } from '../support/xml.ts';

const ESC = String.fromCharCode(27);

const run: TestRun = {
  name: 'railyard contracts verify',
  time: 1.5,
  suites: [
    {
      name: 'merchant -> railyard',
      file: 'contracts/merchant-railyard.json',
      time: 1.25,
      cases: [
        { name: 'failover step 1: charge 100.00 GHS', classname: 'merchant -> railyard', status: 'passed', time: 0.5 },
        {
          name: 'a body with <tags> & "quotes" \'too\'',
          classname: 'merchant -> railyard',
          status: 'failed',
          message: `$.data: expected ${ESC}[1m"a"${ESC}[0m & got <b>`,
          details: `line one\nline two \u0007 bell`,
        },
        { name: 'not run', classname: 'merchant -> railyard', status: 'skipped', message: 'no script' },
      ],
    },
    { name: 'railyard -> hubtel', file: 'contracts/railyard-hubtel.json', cases: [{ name: 'verification', classname: 'railyard -> hubtel', status: 'error', message: 'ENOENT: no such file' }] },
    { name: 'empty', cases: [] },
  ],
};

const child = (e: XmlElement, name: string) => e.children.filter((c) => c.name === name);

describe('junitXml', () => {
  it('writes testsuites > testsuite > testcase with failure, error and skipped children, counts and times', () => {
    const root = parseXml(junitXml(run));
    expect(root.name).toBe('testsuites');
    expect(root.attributes).toEqual({ name: 'railyard contracts verify', tests: '4', failures: '1', errors: '1', skipped: '1', time: '1.500' });
    const suites = child(root, 'testsuite');
    expect(suites.map((s) => s.attributes)).toEqual([
      { name: 'merchant -> railyard', tests: '3', failures: '1', errors: '0', skipped: '1', time: '1.250', file: 'contracts/merchant-railyard.json' },
      { name: 'railyard -> hubtel', tests: '1', failures: '0', errors: '1', skipped: '0', file: 'contracts/railyard-hubtel.json' },
      { name: 'empty', tests: '0', failures: '0', errors: '0', skipped: '0' },
    ]);
    const [passed, failed, skipped] = child(suites[0]!, 'testcase');
    expect(passed!.attributes).toEqual({ name: 'failover step 1: charge 100.00 GHS', classname: 'merchant -> railyard', time: '0.500' });
    expect(passed!.children).toEqual([]);
    expect(failed!.attributes.name).toBe('a body with <tags> & "quotes" \'too\'');
    const failure = child(failed!, 'failure')[0]!;
    // Escaped, and stripped of ANSI codes and of characters XML cannot hold.
    expect(failure.attributes).toEqual({ message: '$.data: expected "a" & got <b>', type: 'AssertionError' });
    expect(failure.text).toBe('line one\nline two  bell');
    expect(child(skipped!, 'skipped')[0]!.attributes).toEqual({ message: 'no script' });
    expect(child(child(suites[1]!, 'testcase')[0]!, 'error')[0]!.attributes).toEqual({ message: 'ENOENT: no such file', type: 'Error' });
  });

  it('escapes the five XML characters and drops what XML forbids', () => {
    expect(xmlEscape(`<a href="x">Tom & Jerry's</a>${ESC}[32m\u0000`)).toBe('&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&apos;s&lt;/a&gt;');
  });

  it('is checked by a reader that refuses what is not well-formed', () => {
    for (const bad of ['<a><b></a></b>', '<a>x & y</a>', '<a>1 < 2</a>', '<a x="1" x="2"/>', '<a>&nbsp;</a>', '<a/><b/>', '<a>', `<a>${ESC}</a>`]) {
      expect(() => parseXml(bad), bad).toThrow();
    }
  });
});

describe('jsonDocument', () => {
  it('gives the summary, the suites and their tests without timings, then the command detail', () => {
    const doc = JSON.parse(jsonDocument(run, { pacts: ['detail'] }));
    expect(doc.summary).toEqual({ total: 4, passed: 1, failed: 2, skipped: 1 });
    expect(doc.summary).toEqual(summariseRun(run));
    expect(doc.suites[0]).toEqual({
      name: 'merchant -> railyard',
      file: 'contracts/merchant-railyard.json',
      tests: [
        { name: 'failover step 1: charge 100.00 GHS', classname: 'merchant -> railyard', status: 'passed', message: null, details: null },
        {
          name: 'a body with <tags> & "quotes" \'too\'',
          classname: 'merchant -> railyard',
          status: 'failed',
          message: `$.data: expected ${ESC}[1m"a"${ESC}[0m & got <b>`,
          details: 'line one\nline two \u0007 bell',
        },
        { name: 'not run', classname: 'merchant -> railyard', status: 'skipped', message: 'no script', details: null },
      ],
    });
    expect(doc.suites[2]).toEqual({ name: 'empty', file: null, tests: [] });
    expect(doc.pacts).toEqual(['detail']);
    expect(JSON.stringify(doc)).not.toContain('time');
  });
});

import type { ScenarioFile } from '../scenarios/scenario-schema.ts';

/** A loaded scenario file; `text`, when given, locates configuration problems without reading `path`. */
export interface ScenarioSource {
  path: string;
  scenario: ScenarioFile;
  text?: string;
}

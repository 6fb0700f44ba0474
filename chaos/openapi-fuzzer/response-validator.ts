import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Json } from './json-text.ts';
import type { Operation } from './operations-of.ts';

// ajv and ajv-formats are CommonJS with `exports.default`.
type Ajv2020Class = typeof import('ajv/dist/2020.js').default;
type AddFormats = typeof import('ajv-formats').default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: Ajv2020Class }).default ?? Ajv2020Module) as Ajv2020Class;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as AddFormats;

export type ResponseValidator = (op: Operation, status: number, body: unknown) => string | null;

export function responseValidator(document: Json): ResponseValidator {
  const id = 'https://railyard.local/openapi.json';
  const ajv = new Ajv2020({ strict: false, allErrors: false, logger: false });
  addFormats(ajv);
  try {
    ajv.addSchema({ ...document, $id: id });
  } catch {
    return () => null; // a document ajv cannot read: the other checks still run
  }
  const pointer = (...parts: string[]) => `#/${parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
  return (op, status, body) => {
    let validate: ReturnType<typeof ajv.getSchema>;
    try {
      validate = ajv.getSchema(id + pointer('paths', op.path, op.method.toLowerCase(), 'responses', String(status), 'content', 'application/json', 'schema'));
    } catch {
      return null;
    }
    if (!validate || validate(body)) return null;
    return ajv.errorsText(validate.errors);
  };
}

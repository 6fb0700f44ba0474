import { z } from 'zod';
import { NotFoundError } from '../kernel/errors.ts';

/**
 * DESIGN.md: any request by an id that names no object is 404 not_found, whatever the id's
 * shape. So a path id is any string: its shape is documented (description, example), never
 * validated, and a wrong prefix, odd unicode or 5 000 characters is simply an id of nothing.
 */
export function pathIdParams<K extends string>(name: K, object: string, example: string, known?: readonly string[]) {
  // A closed set (assets) is listed as documentation; other values still reach the route and
  // answer 404 like any unknown id.
  const id = z
    .string()
    .describe(`Names the ${object}, e.g. ${example}; a value that names no ${object}, whatever its shape, answers 404 not_found`)
    .meta(known ? { examples: [example], enum: [...known] } : { examples: [example] });
  return z.strictObject({ [name]: id } as { [P in K]: typeof id });
}

/** Stripe's wording: `No such charge: 'chg_x'`, with the id in details. */
export function noSuch(object: string, id: string): NotFoundError {
  return new NotFoundError(`No such ${object}: '${id}'`, { id });
}

/**
 * Runs a lookup by a path id and answers any not-found it raises about that id in one wording,
 * whichever service raised it.
 */
export async function findById<T>(object: string, id: string, find: () => Promise<T>): Promise<T> {
  try {
    return await find();
  } catch (err) {
    if (err instanceof NotFoundError && namesId(err, id)) throw noSuch(object, id);
    throw err;
  }
}

// Services put the id they missed in details (as id or reference); another not-found raised
// on the way (a related object) keeps its own message.
function namesId(err: NotFoundError, id: string): boolean {
  return Object.values(err.details ?? {}).includes(id);
}

// What the console's parts share: the admin API call (the token lives in this module's one variable, nowhere else) and
// running an action with its error shown; listeners run as every action starts (the issued key's notice clears then).
import { errorMessage } from './dom.js';

let token = '';
const starting = [];

export const setToken = (value) => { token = value; };
export const onActionStart = (fn) => starting.push(fn);

export async function api(method, path, body) {
  const res = await fetch(path, {
    method, cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer',
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(await errorMessage(res));
  return res.json();
}

export function showError(message) {
  const box = document.getElementById('error');
  box.textContent = message;
  box.hidden = !message;
}

/** Run an action, showing its error (the API's message) instead of failing silently. */
export async function run(action) {
  for (const fn of starting) fn();
  try { await action(); showError(''); } catch (err) { showError(err.message); }
}

/** A form field's number, or undefined when empty. */
export const numberOf = (input) => (input.value.trim() === '' ? undefined : Number(input.value));

/** Comma-separated names as a list, or undefined when empty. */
export const listOf = (input) => {
  const items = input.value.split(',').map((s) => s.trim()).filter(Boolean);
  return items.length ? items : undefined;
};

// Deterministic word-ish token counting and splitting, so tests can assert exact usage numbers.

// One token is a run of ASCII letters/digits or any single other non-space character.
// The `u` flag keeps an astral character (emoji) as one token instead of two surrogate halves.
const TOKEN = /[A-Za-z0-9]+|[^\sA-Za-z0-9]/gu;
// The same tokens with their leading whitespace, so the pieces concatenate back to the text.
const PIECE = /\s*(?:[A-Za-z0-9]+|[^\sA-Za-z0-9])/gu;

export function countTokens(text: string): number {
  return text.match(TOKEN)?.length ?? 0;
}

/** Splits text into one piece per token; `pieces.join('') === text` always holds. */
export function splitTokens(text: string): string[] {
  const pieces: string[] = Array.from(text.match(PIECE) ?? []);
  const covered = pieces.reduce((n, piece) => n + piece.length, 0);
  if (covered < text.length) {
    const trailing = text.slice(covered);
    if (pieces.length > 0) pieces[pieces.length - 1] += trailing;
    else pieces.push(trailing);
  }
  return pieces;
}

export function firstTokens(text: string, count: number): string {
  return splitTokens(text).slice(0, count).join('');
}

/** Splits text into at most `parts` non-empty pieces of similar length, never inside a code point. */
export function splitEvenly(text: string, parts: number): string[] {
  const chars = Array.from(text);
  const size = Math.max(1, Math.ceil(chars.length / parts));
  const pieces: string[] = [];
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(''));
  return pieces;
}

// Every turn (message, item, system prompt) costs this much on top of its text, and the reply is primed with as
// much again, echoing how OpenAI's accounting adds a few tokens per message.
const TURN_OVERHEAD = 3;

/** Prompt tokens of a conversation given each turn's texts: Σ(3 + tokens of the turn's texts) + 3. */
export function promptTokens(turns: string[][]): number {
  return turns.reduce((sum, texts) => sum + TURN_OVERHEAD + texts.reduce((n, text) => n + countTokens(text), 0), TURN_OVERHEAD);
}

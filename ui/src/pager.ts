// Server-side paging by nextPageToken: a stack of the tokens that opened each page seen so far.
// Pure; the list screens keep one in state and never hold more than one page of items.

export interface PagerState {
  /** tokens[i] opens page i ('' = first page) */
  tokens: string[];
  /** the page shown */
  index: number;
  /** the token of the page after the one shown ('' = none) */
  next: string;
}

export const firstPage: PagerState = { tokens: [''], index: 0, next: '' };

export function currentToken(p: PagerState): string {
  return p.tokens[p.index] ?? '';
}

/** After a page loaded: remember its nextPageToken. */
export function loaded(p: PagerState, nextPageToken: string | undefined | null): PagerState {
  return { ...p, next: nextPageToken ?? '' };
}

export function hasNext(p: PagerState): boolean {
  return p.next !== '';
}

export function hasPrev(p: PagerState): boolean {
  return p.index > 0;
}

export function goNext(p: PagerState): PagerState {
  if (!hasNext(p)) return p;
  const tokens = p.tokens.slice(0, p.index + 1);
  tokens.push(p.next);
  return { tokens, index: p.index + 1, next: '' };
}

export function goPrev(p: PagerState): PagerState {
  if (!hasPrev(p)) return p;
  return { tokens: p.tokens.slice(0, p.index), index: p.index - 1, next: '' };
}

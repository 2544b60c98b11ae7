// Types of ui.js, the search UI of a `wikidex site` bundle (not copied into the bundle).

/** `new WikidexUI(options)`. */
export interface WikidexUIOptions {
  /** The element to draw into (its children are replaced), or a selector for it. */
  element: Element | string
  /** The bundle folder's URL (site.json, the blob, the module, worker.js); default: the folder of ui.js. Relative to the page. */
  bundle?: string | URL
  /** The search box's placeholder and accessible name (default `Search`). */
  placeholder?: string
  /** Hits per search (1..=100; default: the core's, 20). */
  limit?: number
}

/**
 * A search box with filters and results, searching the bundle's index in a Web Worker as the
 * user types. Nothing loads before the box is first focused or typed in, but `site.json`; a
 * hit's term scores load when its why panel opens.
 * Errors show in the element with a code: `file` (the page was opened from a file), `http`
 * (a file of the bundle answered an HTTP error), `network`, `site_json`, `wasm` (the module did
 * not load or compile), `worker`, or the core's own (`incompatible_format`, ...).
 */
export class WikidexUI {
  constructor(options: WikidexUIOptions)
  /** The element drawn into. */
  readonly element: Element
  /** The bundle folder's URL (ends with `/`). */
  readonly bundle: URL
  /** The search box (`role="combobox"`). */
  readonly input: HTMLInputElement
  /** The results (`role="listbox"`); `dataset.query` is the query the hits shown answer, `dataset.semantic` whether they were ranked by meaning too. */
  readonly list: HTMLUListElement
  /** Searches for `query` as if it were typed (without it: the text in the box). */
  search(query?: string): void
  /**
   * Turns ranking by meaning on or off, as the "By meaning" toggle does: offered when the bundle
   * was written with a model (`wikidex site --model`; site.json's `semantic`), which then loads
   * the first time (the model runner's module and the model, in the bundle's `semantic/`). The
   * semantic lane then ranks beside the lexical ones. A bundle without a model ignores it.
   */
  setSemantic(on: boolean): void
  /** Stops the worker and empties the element. */
  destroy(): void
}

/**
 * `<wikidex-search>`: a `WikidexUI` in the element, made when it is added to the page.
 * Attributes: `placeholder`, `bundle` (as the options; read once), `limit`.
 */
export class WikidexSearchElement extends HTMLElement {
  /** The UI drawn in the element, while it is in the page. */
  ui: WikidexUI | null | undefined
}

declare global {
  interface HTMLElementTagNameMap {
    'wikidex-search': WikidexSearchElement
  }
}

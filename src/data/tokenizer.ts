/**
 * The model's real tokenizer (@huggingface/tokenizers, from `tokenizer.json`), used as transformers uses
 * it after rendering a chat template: no special-token insertion. `encode` caches per segment: the text
 * between added tokens is tokenised independently by the tokenizer itself (added tokens are split out
 * before normalisation and pre-tokenisation), so splitting on the added tokens and concatenating the cached
 * segment ids is exactly whole-string encoding. The cache is disabled
 * automatically for tokenizers whose added tokens strip neighbouring whitespace or match single words,
 * where that equivalence does not hold.
 *
 * A segment the cache has not seen is, for Qwen's tokenizer layout, split by the pre-tokenizer regex and
 * encoded piece by piece through a second cache of pieces (mostly words): byte-level BPE works on each
 * piece alone, and the library's per-call splitting and byte mapping were most of `toolgym sft`'s time.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import { DataError } from "../core/errors.ts";

interface AddedTokenEntry {
  id: number;
  content: string;
  lstrip?: boolean;
  rstrip?: boolean;
  single_word?: boolean;
}

export interface SegmentCacheStats {
  hits: number;
  misses: number;
  entries: number;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Segment cache bound: cleared when the cached segment text passes this many characters. Most hits are
 * the prompt render re-using the full render's segments and the system prompt / tool schemas repeating
 * across rows, so a few MB of text (about 5 bytes a character with its ids) keep nearly every hit.
 */
const defaultCacheCharacters = 4_000_000;

/**
 * A standalone copy of a segment for use as a cache key. `split` returns slices that keep the whole
 * rendered conversation alive, so a cached slice would pin every render that ever missed the cache.
 */
function detached(segment: string): string {
  return segment.length < 16 ? segment : Buffer.from(segment, "utf16le").toString("utf16le");
}

/** The pre-tokenizer regex of the Qwen2/Qwen3 `tokenizer.json` (a Rust regex), as written there. */
const qwenSplitRegex = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
/**
 * The same regex in JavaScript, translated as @huggingface/tokenizers translates it: `(?i:…)` spelled out
 * as ASCII case classes, `\s` as Unicode White_Space (Rust's `\s`, which differs from JavaScript's).
 */
const qwenSplitPattern =
  /(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\p{White_Space}\p{L}\p{N}]+[\r\n]*|\p{White_Space}*[\r\n]+|\p{White_Space}+(?!\P{White_Space})|\p{White_Space}+/gu;

/**
 * True for the Qwen2/Qwen3 layout: NFC, then the regex split (pieces kept apart), then byte-level mapping
 * and BPE, which work on each piece alone. There, encoding a segment is encoding its pieces one by one.
 */
function splitsIntoIndependentPieces(tokenizerJson: Record<string, unknown>): boolean {
  const normalizer = tokenizerJson.normalizer as { type?: unknown } | null | undefined;
  const expected = {
    type: "Sequence",
    pretokenizers: [
      { type: "Split", pattern: { Regex: qwenSplitRegex }, behavior: "Isolated", invert: false },
      { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: false },
    ],
  };
  return normalizer?.type === "NFC" && JSON.stringify(tokenizerJson.pre_tokenizer) === JSON.stringify(expected);
}

/** Word cache bound: cleared when it holds this many pieces. */
const defaultCachePieces = 200_000;

export class SegmentTokenizer {
  private readonly tokenizer: Tokenizer;
  private readonly splitter: RegExp | undefined;
  private readonly addedIds = new Map<string, number>();
  private readonly cache = new Map<string, Int32Array>();
  private cachedCharacters = 0;
  /** Pre-tokenizer pieces → ids, when the tokenizer encodes pieces independently (Qwen); else undefined. */
  private readonly pieces: Map<string, Int32Array> | undefined;
  readonly stats: SegmentCacheStats = { hits: 0, misses: 0, entries: 0 };

  constructor(
    tokenizerJson: { added_tokens?: AddedTokenEntry[] } & Record<string, unknown>,
    tokenizerConfig: Record<string, unknown>,
    private readonly cacheCharacters = defaultCacheCharacters,
  ) {
    this.tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
    const added = tokenizerJson.added_tokens ?? [];
    for (const token of added) this.addedIds.set(token.content, token.id);
    const safe = added.length > 0 && added.every((token) => !token.lstrip && !token.rstrip && !token.single_word);
    if (safe) {
      const alternatives = added
        .map((token) => token.content)
        .sort((left, right) => right.length - left.length)
        .map(escapeRegex);
      this.splitter = new RegExp(`(${alternatives.join("|")})`);
    }
    if (splitsIntoIndependentPieces(tokenizerJson)) this.pieces = new Map();
  }

  /** Loads `tokenizer.json` (+ `tokenizer_config.json` when present) from a model directory. */
  static fromDirectory(directory: string): SegmentTokenizer {
    const tokenizerPath = join(directory, "tokenizer.json");
    if (!existsSync(tokenizerPath)) {
      throw new DataError({ code: "MODEL_DIR_INVALID", message: `${tokenizerPath} is missing; --model-dir must hold the model's tokenizer.json` });
    }
    const configPath = join(directory, "tokenizer_config.json");
    const config = existsSync(configPath) ? (JSON.parse(readFileSync(configPath, "utf8")) as Record<string, unknown>) : {};
    return new SegmentTokenizer(JSON.parse(readFileSync(tokenizerPath, "utf8")) as Record<string, unknown>, config);
  }

  /** True when encoding goes through the per-segment cache. */
  get segmentCacheEnabled(): boolean {
    return this.splitter !== undefined;
  }

  /** Whole-string encoding, `add_special_tokens: false` (the reference the cache must equal). */
  encodeUncached(text: string): number[] {
    return this.tokenizer.encode(text, { add_special_tokens: false }).ids;
  }

  /** Encoding through the segment cache; identical to `encodeUncached`. */
  encode(text: string): number[] {
    if (!this.splitter) return this.encodeUncached(text);
    const ids: number[] = [];
    for (const segment of text.split(this.splitter)) {
      if (segment.length === 0) continue;
      const addedId = this.addedIds.get(segment);
      if (addedId !== undefined) {
        ids.push(addedId);
        continue;
      }
      let cached = this.cache.get(segment);
      if (cached) this.stats.hits++;
      else {
        this.stats.misses++;
        cached = this.encodeSegment(segment);
        if (this.cachedCharacters + segment.length > this.cacheCharacters) {
          this.cache.clear();
          this.cachedCharacters = 0;
        }
        this.cache.set(detached(segment), cached);
        this.cachedCharacters += segment.length;
        this.stats.entries = this.cache.size;
      }
      for (let index = 0; index < cached.length; index++) ids.push(cached[index]);
    }
    return ids;
  }

  /**
   * One segment (text without added tokens). With the piece cache: an NFC segment is already what the
   * normaliser gives, so the tokenizer would split exactly these regex pieces and encode each on its own;
   * each distinct piece is encoded once. Other segments are encoded whole.
   */
  private encodeSegment(segment: string): Int32Array {
    const pieces = this.pieces;
    if (!pieces || segment.normalize("NFC") !== segment) return Int32Array.from(this.encodeUncached(segment));
    const ids: number[] = [];
    const add = (piece: string) => {
      let cached = pieces.get(piece);
      if (!cached) {
        cached = Int32Array.from(this.encodeUncached(piece));
        if (pieces.size >= defaultCachePieces) pieces.clear();
        pieces.set(detached(piece), cached);
      }
      for (let index = 0; index < cached.length; index++) ids.push(cached[index]);
    };
    let end = 0;
    for (const match of segment.matchAll(qwenSplitPattern)) {
      // text between matches is a piece of its own (the split keeps it); this regex leaves none
      if (match.index > end) add(segment.slice(end, match.index));
      add(match[0]);
      end = match.index + match[0].length;
    }
    if (end < segment.length) add(segment.slice(end));
    return Int32Array.from(ids);
  }

  decode(ids: readonly number[]): string {
    return this.tokenizer.decode(ids as number[], { skip_special_tokens: false });
  }
}

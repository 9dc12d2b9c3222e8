/* The Playground: the reference model translating in the reader's browser.
 *
 * ONNX Runtime Web (npm onnxruntime-web, its wasm backend) runs the two graphs that
 * lib/course/playground.py exports: encoder.onnx (every layer's state after each source token) and
 * decoder_step.onnx (one Decoder.step, then log-softmax). Everything else is here, written to
 * give the same answers as lib: the tokeniser and detokeniser of lib/data.py, greedy search and
 * beam search with the rules of lib/search.py (2k candidates a step, a pool of finished
 * hypotheses, relative threshold pruning, the 2 S + 6 length cap, the early stop), and the
 * numbers of the views (units shown, PCA trajectories). The views themselves (per-layer heatmaps,
 * PCA trajectories, the beam tree) are drawn by the static widgets' own scripts, S2S.draw.hidden
 * and S2S.draw.beam (lib/widgets/static/), from the same data as in the chapters.
 *
 * Two models: the reference model (model/) and, when the build exported it, the attention
 * chapter's attention model (model/attention/). The attention model's graphs also give
 * the keys W_h h_j (encoder) and each step's weights over the source (decoder step); the page
 * draws them as a heatmap (source x target) for the translation and for each hypothesis beam
 * search finished. It is downloaded only when the reader switches to it, so it never delays the
 * reference model's first translation.
 *
 * The chapters' live views use the same engine: on a chapter page, live.js loads this script
 * (which then loads no model by itself) when the reader first uses a view's form, and asks for
 * the view's data as lib's views compute it (hiddenView, stepperView, beamView, attentionView:
 * lib.widgets' capture functions and view data, with their length caps).
 *
 * Nothing is fetched from outside the site: the runtime, its wasm, the widgets' scripts and the
 * model are served from ../_static/playground/ (scripts/playground_site.py copies them there),
 * and only this page and live.js load them. window.S2SPlayground exposes the functions, which
 * tests/test_playground.py and tests/test_live_views.py drive.
 */
/* global ort, S2S */
(function () {
  "use strict";

  var BASE = document.currentScript.src.replace(/[^/]*$/, "");  // .../_static/playground/

  // -------------------------------------------------------------------------------------------
  // Text: lib.data.normalize, tokenize, detokenize
  // -------------------------------------------------------------------------------------------

  var FOLD = {"\u202f": " ", "\u00a0": " ", "\u2009": " ", "\u2007": " ", "\t": " ",
    "\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2010": "-", "\u2011": "-"};
  // Python's str.split() and regex \s: the characters str.isspace() accepts
  var WS = "\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f" +
    "\\u205f\\u3000";
  var WORD = "\\p{L}\\p{N}_";  // Python's \w on str: letters, digits and numbers, underscore
  var SPLIT = new RegExp("[" + WS + "]+", "u");
  var TOKEN = new RegExp("[" + WORD + "]+(?:-[" + WORD + "]+)*'?|[^" + WORD + WS + "]", "gu");
  var NO_SPACE_BEFORE = {".": 1, ",": 1, ")": 1, "\u2026": 1};
  var NO_SPACE_AFTER = {"(": 1};

  function normalize(text) {
    var folded = Array.from(text.normalize("NFC"), function (c) {
      return Object.prototype.hasOwnProperty.call(FOLD, c) ? FOLD[c] : c;
    }).join("");
    return folded.split(SPLIT).filter(function (w) { return w.length; }).join(" ");
  }

  function tokenize(text) { return normalize(text).match(TOKEN) || []; }

  function detokenize(tokens) {
    var out = "", prev = null;
    tokens.forEach(function (tok) {
      if (prev === null) out = tok;
      else if (prev.endsWith("'") || NO_SPACE_AFTER[prev] || NO_SPACE_BEFORE[tok]) out += tok;
      else out += " " + tok;
      prev = tok;
    });
    return out;
  }

  // -------------------------------------------------------------------------------------------
  // The model: vocabularies, the two ONNX sessions, one encoder pass and one decoder step
  // -------------------------------------------------------------------------------------------

  var MODELS = {reference: {dir: "model/", label: "reference model"},
    attention: {dir: "model/attention/", label: "attention model"}};
  var M = {};  // the model in use: vocab settings, sessions, sizes (filled by loadModel)

  function loadScript(src) {
    return new Promise(function (resolve, reject) {
      var s = document.createElement("script");
      s.src = src; s.onload = resolve;
      s.onerror = function () { reject(new Error("could not load " + src)); };
      document.head.appendChild(s);
    });
  }

  function fetchOk(url, kind) {
    return fetch(url).then(function (r) {
      if (!r.ok) throw new Error(url + ": HTTP " + r.status);
      return r[kind]();
    });
  }

  function manifestOf(name) {
    return fetch(BASE + MODELS[name].dir + "manifest.json", {cache: "no-cache"}).then(function (r) {
      if (!r.ok) throw new Error("the Playground's " + MODELS[name].label + " is missing (HTTP " +
        r.status + ")");
      return r.json();
    });
  }

  var runtime = null;
  function loadRuntime() {
    runtime = runtime || loadScript(BASE + "ort/ort.wasm.min.js").then(function () {
      ort.env.wasm.wasmPaths = BASE + "ort/";
      ort.env.wasm.numThreads = 1;  // threads need cross-origin isolation, which Pages lacks
    });
    return runtime;
  }

  /** Model `name`'s sessions and settings (once; later calls return the same promise). The
   * runtime's fusions of quantised nodes stay off (session.disable_quant_qdq): they would round
   * the activations to 8 bits too, and the page would no longer compute what lib computes. */
  function loadModel(name, manifest) {
    var entry = MODELS[name];
    if (entry.promise) return entry.promise;
    var dir = BASE + entry.dir;
    entry.promise = Promise.all([loadRuntime(), manifest || entry.manifest || manifestOf(name)]).then(function (res) {
      var v = "?v=" + res[1].key;  // a new export is a new URL: never a stale cached model
      var opts = {executionProviders: ["wasm"], graphOptimizationLevel: "all",
        extra: {session: {disable_quant_qdq: "1"}}};
      return Promise.all([res[1], fetchOk(dir + "vocab.json" + v, "json"),
        fetchOk(dir + "encoder.onnx" + v, "arrayBuffer").then(function (b) {
          return ort.InferenceSession.create(new Uint8Array(b), opts);
        }),
        fetchOk(dir + "decoder_step.onnx" + v, "arrayBuffer").then(function (b) {
          return ort.InferenceSession.create(new Uint8Array(b), opts);
        })]);
    }).then(function (res) {
      var v = res[1], m = {name: name, manifest: res[0], vocab: v, enc: res[2], dec: res[3]};
      m.L = v.num_layers; m.H = v.hidden_size; m.V = v.tgt_itos.length; m.attn = !!v.attention;
      m.sp = v.specials;
      m.srcIndex = new Map(v.src_itos.map(function (t, i) { return [t, i]; }));
      m.tgtIndex = new Map(v.tgt_itos.map(function (t, i) { return [t, i]; }));
      m.never = new Set(v.never_generated);
      return m;
    });
    entry.promise.catch(function () { entry.promise = null; });  // a failed load may be retried
    return entry.promise;
  }

  /** Make model `name` the one every function below uses (loading it the first time). */
  function use(name) {
    if (!MODELS[name]) throw new Error("no model named " + JSON.stringify(name));
    return loadModel(name).then(function (m) {
      Object.keys(M).forEach(function (k) { delete M[k]; });
      Object.assign(M, m);
      return M;
    });
  }

  /** The reference model, in use; and, beside it, whether the build has an attention model
   * (its small manifest only: the model itself loads on the switch). */
  function load() {
    var probe = manifestOf("attention").then(function (m) { MODELS.attention.manifest = m; return m; },
      function () { return null; });
    return Promise.all([use("reference"), probe]).then(function (res) { return res[0]; });
  }

  function int64(ids) { return new ort.Tensor("int64", BigInt64Array.from(ids, BigInt), [ids.length]); }

  /** ids (S) -> {states (L, S, H), every layer's state after each token, as a Float32Array;
   * keys (S, A), W_h h_j, for the attention model}. */
  function encode(ids) {
    var src = new ort.Tensor("int64", BigInt64Array.from(ids, BigInt), [1, ids.length]);
    return M.enc.run({src: src}).then(function (out) {
      return {states: out.states.data, keys: out.keys ? out.keys.data : null};
    });
  }

  /** prev (N), state (L, N, H), and the source side `ctx` (start's) -> {logp (N, V),
   * state (L, N, H), weights (N, S) or null}. The reference model reads the context c (N, H),
   * the attention model the memory h_1..h_S (S, H) and keys (S, A) that all N share. */
  function step(prev, state, ctx) {
    var N = prev.length, feeds = {prev: int64(prev),
      state: new ort.Tensor("float32", state, [M.L, N, M.H])};
    if (M.attn) {
      feeds.memory = new ort.Tensor("float32", ctx.memory, [ctx.S, M.H]);
      feeds.keys = new ort.Tensor("float32", ctx.keys, [ctx.S, ctx.keys.length / ctx.S]);
    } else {
      feeds.context = new ort.Tensor("float32", repeat(ctx.context, N), [N, M.H]);
    }
    return M.dec.run(feeds).then(function (out) {
      return {logp: out.logp.data, state: out.next_state.data,
        weights: out.weights ? out.weights.data : null};
    });
  }

  /** The decoder's start from encode's output for S tokens: s_0 (L, 1, H) and what each step
   * reads from the source (the context (H), or the top layer's states and their keys). */
  function start(enc, S) {
    var L = M.L, H = M.H, s0 = new Float32Array(L * H), states = enc.states;
    for (var l = 0; l < L; l++) s0.set(states.subarray((l * S + S - 1) * H, (l * S + S) * H), l * H);
    if (M.attn) return {state: s0, S: S, memory: states.slice((L - 1) * S * H), keys: enc.keys};
    return {state: s0, context: s0.slice((L - 1) * H)};
  }

  /** Rows `rows` of a state (L, N, H) -> (L, rows.length, H). */
  function gatherRows(state, N, rows) {
    var L = M.L, H = M.H, out = new Float32Array(L * rows.length * H);
    for (var l = 0; l < L; l++) {
      rows.forEach(function (r, i) {
        out.set(state.subarray((l * N + r) * H, (l * N + r + 1) * H), (l * rows.length + i) * H);
      });
    }
    return out;
  }

  function repeat(v, n) {
    var out = new Float32Array(v.length * n);
    for (var i = 0; i < n; i++) out.set(v, i * v.length);
    return out;
  }

  /** The m most likely allowed tokens of row r of logp (N, V), best first (lib top_candidates). */
  function topAllowed(logp, r, m) {
    var V = M.V, base = r * V, ids = [], lps = [];
    for (var v = 0; v < V; v++) {
      if (M.never.has(v)) continue;
      var x = logp[base + v];
      if (ids.length === m && !(x > lps[m - 1])) continue;
      var j = ids.length === m ? m - 1 : ids.length;
      while (j > 0 && x > lps[j - 1]) { lps[j] = lps[j - 1]; ids[j] = ids[j - 1]; j--; }
      lps[j] = x; ids[j] = v;
    }
    return {ids: ids, lps: lps};
  }

  // -------------------------------------------------------------------------------------------
  // Input: lib's Seq2Seq.prepare, with the same refusals
  // -------------------------------------------------------------------------------------------

  function InputError(message) { this.message = message; this.name = "InputError"; }
  InputError.prototype = Object.create(Error.prototype);

  /** A sentence -> {tokens, ids, unknown}; refuses what Seq2Seq.prepare refuses. */
  function prepare(text) {
    var tokens = tokenize(text);
    if (!tokens.length) {
      throw new InputError("The sentence is empty: " + JSON.stringify(text) +
        " holds no word or punctuation. Type an English sentence.");
    }
    if (tokens.length > M.vocab.max_src_len) {
      throw new InputError("The sentence has " + tokens.length + " tokens, more than the " +
        "model's max_src_len=" + M.vocab.max_src_len + ". Shorten it or split it in two.");
    }
    var ids = tokens.map(function (t) {
      return M.srcIndex.has(t) ? M.srcIndex.get(t) : M.sp.unk;
    });
    return {tokens: tokens, ids: ids, unknown: ids.map(function (i) { return i === M.sp.unk; })};
  }

  function sourceCap(S, maxLen) {
    return Math.min(maxLen, M.vocab.source_cap[0] * S + M.vocab.source_cap[1]);
  }

  function checkAlpha(alpha) {
    if (typeof alpha !== "number" || !isFinite(alpha) || alpha < 0) {
      throw new InputError("alpha (the length-normalisation exponent) must be a finite number " +
        ">= 0, got " + alpha + "; use 0 for no normalisation");
    }
    return alpha;
  }

  function checkMargin(margin) {
    if (margin === null || margin === undefined) return Infinity;
    if (typeof margin !== "number" || isNaN(margin) || margin < 0) {
      throw new InputError("margin (the pruning threshold in log-probability) must be a number " +
        ">= 0, got " + margin + "; leave it empty for no pruning");
    }
    return margin;
  }

  // -------------------------------------------------------------------------------------------
  // Searches: lib.search.greedy and lib.search.beam_search (source_cap=True), one sentence
  // -------------------------------------------------------------------------------------------

  /** The rank of token `tok` in row 0 of logp (1, V), among the tokens the model may write
   * (lib.widgets.decode: 1 = the most likely). */
  function rankOf(logp, tok) {
    var x = logp[tok], rank = 1;
    for (var v = 0; v < M.V; v++) if (!M.never.has(v) && logp[v] > x) rank++;
    return rank;
  }

  /** Greedy or forced decoding -> {tokens, logps, states [(L, H)], weights [(S)] for the
   * attention model, and with opts.topK each step's rank of the token written and its topK
   * best {ids, lps}}, encoder states too. `forced` alone: those tokens and no more (the
   * Playground's winner); with opts.prefix, those tokens first and then greedy, as
   * lib.widgets.decode steps. opts.capped (default true) stops at lib.search's source cap, as
   * translate() does; false stops only at <eos> or max_tgt_len, as the widgets' decode does. */
  async function decode(ids, forced, opts) {
    opts = opts || {};
    var S = ids.length, maxLen = M.vocab.max_tgt_len;
    var cap = opts.capped === false ? maxLen : sourceCap(S, maxLen);
    var only = !!forced && !opts.prefix;
    forced = forced || [];
    if (!only && forced.length >= cap) {
      throw new InputError("The forced prefix has " + forced.length + " tokens; the length cap " +
        "max_len=" + cap + " leaves no step to continue. Shorten the prefix.");
    }
    var enc = await encode(ids), s = start(enc, S);
    var state = s.state, prev = M.sp.sos;
    var run = {tokens: [], logps: [], states: [], weights: M.attn ? [] : null, encoder: enc.states,
      ranks: [], tops: []};
    for (var t = 0; t < (only ? forced.length : maxLen); t++) {
      var out = await step([prev], state, s);
      var tok = t < forced.length ? forced[t] : topAllowed(out.logp, 0, 1).ids[0];
      run.tokens.push(tok); run.logps.push(out.logp[tok]); run.states.push(out.state);
      if (M.attn) run.weights.push(out.weights);
      if (opts.topK) {
        run.tops.push(topAllowed(out.logp, 0, opts.topK));
        run.ranks.push(rankOf(out.logp, tok));
      }
      state = out.state; prev = tok;
      if (!only && (tok === M.sp.eos || cap <= t + 1)) break;
    }
    return run;
  }

  function norm(raw, length, alpha) {
    return alpha ? Math.fround(raw / Math.fround(Math.pow(length, alpha))) : raw;
  }

  /** Beam search with lib's rules -> {tokens (with <eos>), raw, score, trace (a BeamTrace),
   * finished: every hypothesis the search finished, best first, {tokens, raw, score, id,
   * weights [(S)] (the attention model's weights at each of its steps, else null)}}.
   * opts.capped: as decode's (false: lib's beam_search without source_cap, as the beam view). */
  async function beamSearch(ids, k, alpha, margin, opts) {
    alpha = checkAlpha(alpha); margin = checkMargin(margin);
    if (!Number.isInteger(k) || k < 1) throw new InputError("beam_size must be an integer >= 1");
    var S = ids.length, maxLen = M.vocab.max_tgt_len, itos = M.vocab.tgt_itos;
    var cap = opts && opts.capped === false ? maxLen : sourceCap(S, maxLen);
    var enc = await encode(ids), s = start(enc, S), NEG = -Infinity;
    var state = s.state, prev = [M.sp.sos], finished = [];
    var alive = [0], seqs = [[]], aliveId = [0];  // per beam slot; empty slot: alive = -inf
    var attns = [[]];  // per beam slot: the weights (S) of each step so far (attention model)
    var nodes = [{id: 0, parent: null, step: 0, token: M.sp.sos, text: itos[M.sp.sos], raw: 0,
      score: 0, status: "kept"}];
    var pool = null, m = 2 * k;
    for (var t = 1; t <= maxLen; t++) {
      var filled = [];
      alive.forEach(function (a, slot) { if (a > NEG) filled.push(slot); });
      var out = await step(prev, state, s);
      var cands = [];
      filled.forEach(function (slot, row) {
        var top = topAllowed(out.logp, row, m);
        top.ids.forEach(function (tok, j) {
          cands.push({raw: Math.fround(alive[slot] + top.lps[j]), slot: slot, row: row,
            tok: tok, flat: slot * m + j});
        });
      });
      cands.sort(function (a, b) { return b.raw - a.raw || a.flat - b.flat; });
      var best = cands.slice(0, 2 * k), atCap = cap <= t;
      var order = best.map(function (c, j) { return j + (c.tok === M.sp.eos ? 2 * k : 0); });
      var keep = best.map(function (c, j) { return j; })
        .sort(function (a, b) { return order[a] - order[b]; }).slice(0, k);
      var floor = Math.fround(best[0].raw - margin);
      best.forEach(function (c, j) {
        var eos = c.tok === M.sp.eos;
        c.kept = keep.indexOf(j) >= 0 && !eos && c.raw > NEG && c.raw >= floor;
        c.finishing = ((eos && j < k) || (c.kept && atCap)) && c.raw > NEG;
        c.score = norm(c.raw, t, alpha);
        c.id = 1 + (t - 1) * 2 * k + j;
        c.seq = seqs[c.slot].concat([c.tok]);
        c.attn = M.attn ? attns[c.slot].concat([out.weights.slice(c.row * S, (c.row + 1) * S)]) : null;
        if (c.finishing) finished.push(c);
        if (c.finishing && (pool === null || c.score > pool.score)) pool = c;
        if (c.raw > NEG) {
          nodes.push({id: c.id, parent: aliveId[c.slot], step: t, token: c.tok, text: itos[c.tok],
            raw: c.raw, score: c.score, status: c.finishing ? "finished" : c.kept ? "kept" : "pruned"});
        }
      });
      var next = keep.map(function (j) { return best[j]; });
      alive = next.map(function (c) { return c.kept ? c.raw : NEG; });
      var bound = norm(Math.max.apply(null, alive), cap, alpha);
      if (!((pool === null ? NEG : pool.score) < bound) || atCap) break;
      var live = next.filter(function (c) { return c.kept; });
      state = gatherRows(out.state, filled.length, live.map(function (c) { return c.row; }));
      prev = live.map(function (c) { return c.tok; });
      seqs = next.map(function (c) { return c.seq; });
      attns = next.map(function (c) { return c.attn; });
      aliveId = next.map(function (c) { return c.id; });
    }
    finished.sort(function (a, b) { return b.score - a.score || a.id - b.id; });
    return {tokens: pool.seq, raw: pool.raw, score: pool.score, encoder: enc.states,
      finished: finished.map(function (c) {
        return {tokens: c.seq, raw: c.raw, score: c.score, id: c.id, weights: c.attn};
      }),
      trace: {source: ids.map(function (i) { return M.vocab.src_itos[i]; }), beam_size: k,
        alpha: alpha, max_len: cap, nodes: nodes, winner: pool.id, nbest: [pool.id],
        margin: isFinite(margin) ? margin : null}};
  }

  function words(ids) {  // lib Vocab.decode(strip=True)
    var out = [];
    for (var i = 0; i < ids.length; i++) {
      if (ids[i] === M.sp.eos) break;
      if (ids[i] !== M.sp.pad && ids[i] !== M.sp.sos) out.push(M.vocab.tgt_itos[ids[i]]);
    }
    return out;
  }

  /** Text in, everything the page shows out: translation, per-token P, states, beam trace. */
  async function translate(text, opts) {
    var src = prepare(text), beam = null, greedy = await decode(src.ids, null), run = greedy;
    if (opts.search !== "greedy") {
      beam = await beamSearch(src.ids, opts.k, opts.alpha, opts.margin);
      run = await decode(src.ids, beam.tokens);  // the winner, forced: its states and P
    }
    return {text: text, model: M.name, source: src, tokens: run.tokens, words: words(run.tokens),
      translation: detokenize(words(run.tokens)), logps: run.logps, run: run, beam: beam,
      greedy: greedy, weights: run.weights};
  }

  // -------------------------------------------------------------------------------------------
  // Views: the same data as lib.widgets' HiddenView and BeamView, drawn by the same functions
  // (S2S.draw.hidden and S2S.draw.beam, lib/widgets/static/hidden.js and beam.js, which
  // playground.html loads). Only the numbers are computed here, as lib.widgets.hidden computes
  // them: pick_units, panel_data and lib.widgets.pca.pca2 (tests/test_playground.py compares).
  // -------------------------------------------------------------------------------------------

  var HEAT_UNITS = 48;  // rows of a heatmap (lib.widgets.hidden.UNITS): the most varying units
  var ATTENTION_DIGITS = 4;  // significant digits of the weights (attention_view.DIGITS)

  function el(tag, attrs, parent) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (a) {
      if (a === "text") e.textContent = attrs[a]; else e.setAttribute(a, attrs[a]);
    });
    if (parent) parent.appendChild(e);
    return e;
  }

  /** lib.widgets.hidden.pick_units: for cols (T arrays of H values), the `units` (default
   * HEAT_UNITS) that vary most over time, sorted by their last value. */
  function pickUnits(cols, units) {
    var H = cols[0].length, T = cols.length, spread = [];
    for (var h = 0; h < H; h++) {
      var mean = 0, v = 0;
      cols.forEach(function (c) { mean += c[h] / T; });
      cols.forEach(function (c) { v += (c[h] - mean) * (c[h] - mean) / T; });
      spread.push(T > 1 ? v : Math.abs(cols[0][h]));
    }
    var rows = spread.map(function (s, i) { return i; })
      .sort(function (a, b) { return spread[b] - spread[a]; }).slice(0, units || HEAT_UNITS);
    return rows.sort(function (a, b) { return cols[T - 1][b] - cols[T - 1][a]; });
  }

  /** lib.widgets.hidden.panel_data: the units shown and their values as int8 (v * 127),
   * time-major, in base64. */
  function panelData(cols, n) {
    var units = pickUnits(cols, n), bytes = new Int8Array(cols.length * units.length), s = "";
    cols.forEach(function (c, t) {
      units.forEach(function (h, r) {
        bytes[t * units.length + r] = Math.round(Math.max(-1, Math.min(1, c[h])) * 127);
      });
    });
    new Uint8Array(bytes.buffer).forEach(function (b) { s += String.fromCharCode(b); });
    return {units: units, vals: btoa(s)};
  }

  /** Eigenvalues (descending) and unit eigenvectors of a symmetric matrix A (n arrays of n,
   * changed here) by cyclic Jacobi rotations: exact to rounding for the small matrices here. */
  function eigh(A) {
    var n = A.length, V = A.map(function (row, i) {
      return row.map(function (x, j) { return i === j ? 1 : 0; });
    });
    function rotate(M, p, q, c, s, rows) {  // columns p and q of M (and rows p, q if `rows`)
      for (var k = 0; k < n; k++) {
        var a = M[k][p], b = M[k][q];
        M[k][p] = c * a - s * b; M[k][q] = s * a + c * b;
      }
      if (!rows) return;
      for (k = 0; k < n; k++) {
        a = M[p][k]; b = M[q][k];
        M[p][k] = c * a - s * b; M[q][k] = s * a + c * b;
      }
    }
    var total = 0;  // the sum of squares of A's entries: the scale of "off-diagonal is zero"
    A.forEach(function (row) { row.forEach(function (x) { total += x * x; }); });
    for (var sweep = 0; sweep < 64; sweep++) {
      var off = 0;
      for (var p = 0; p < n; p++) for (var q = p + 1; q < n; q++) off += A[p][q] * A[p][q];
      if (!(off > 1e-30 * total)) break;
      for (p = 0; p < n; p++) {
        for (q = p + 1; q < n; q++) {
          if (A[p][q] === 0) continue;
          var theta = (A[q][q] - A[p][p]) / (2 * A[p][q]);
          var t = (theta >= 0 ? 1 : -1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
          var c = 1 / Math.sqrt(t * t + 1);
          rotate(A, p, q, c, t * c, true);
          rotate(V, p, q, c, t * c, false);
        }
      }
    }
    var order = A.map(function (row, i) { return i; });
    order.sort(function (a, b) { return A[b][b] - A[a][a]; });
    return order.map(function (i) {
      return {value: A[i][i], vector: V.map(function (row) { return row[i]; })};
    });
  }

  /** lib.widgets.pca.pca2 projected: points (N arrays of H) -> {xy: N [PC1, PC2], explained}.
   * The directions come from the N x N Gram matrix of the centred points; each direction's
   * sign makes its largest loading positive, as in lib. */
  function pca2(points) {
    var N = points.length, H = points[0].length, mean = new Float64Array(H);
    points.forEach(function (p) { for (var h = 0; h < H; h++) mean[h] += p[h] / N; });
    var X = points.map(function (p) {
      return Array.from(p, function (x, h) { return x - mean[h]; });
    });
    var dot = function (a, b) { return a.reduce(function (s, x, h) { return s + x * b[h]; }, 0); };
    var eig = eigh(X.map(function (a) { return X.map(function (b) { return dot(a, b); }); }));
    var total = eig.reduce(function (s, e) { return s + Math.max(e.value, 0); }, 0);
    var xy = points.map(function () { return [0, 0]; }), explained = [0, 0];
    eig.slice(0, 2).forEach(function (e, i) {
      if (!(e.value > 1e-12 * total)) return;  // fewer than two directions: lib's zeros
      var u = new Float64Array(H), sign;
      X.forEach(function (row, j) { for (var h = 0; h < H; h++) u[h] += row[h] * e.vector[j]; });
      var big = u.reduce(function (b, x, h) { return Math.abs(x) > Math.abs(u[b]) ? h : b; }, 0);
      sign = u[big] < 0 ? -1 : 1;
      X.forEach(function (row, j) { xy[j][i] = sign * Math.sqrt(e.value) * e.vector[j]; });
      explained[i] = e.value / total;
    });
    return {xy: xy, explained: explained};
  }

  /** HiddenView's data for a translation: every layer's states, encoder's then decoder's.
   * opts (a chapter's view, lib.widgets.hidden_state_explorer): units (rows per heatmap),
   * mode and layer (the panel shown first), and map, the build's map of many sentences'
   * contexts with its PCA, on which the sentence's own context is placed. */
  function hiddenData(res, opts) {
    opts = opts || {};
    var L = M.L, H = M.H, S = res.source.tokens.length, panels = {}, trajectories = [];
    for (var l = 0; l < L; l++) {
      var enc = [], dec = [];
      for (var s = 0; s < S; s++) {
        enc.push(res.run.encoder.subarray((l * S + s) * H, (l * S + s + 1) * H));
      }
      res.run.states.forEach(function (st) { dec.push(st.subarray(l * H, (l + 1) * H)); });
      panels["enc" + (l + 1)] = panelData(enc, opts.units);
      panels["dec" + (l + 1)] = panelData(dec, opts.units);
      trajectories.push(pca2(enc.concat(dec)));
    }
    return {S: S, T: res.tokens.length, L: L, H: H, mode: opts.mode || "enc",
      layer: opts.layer || L, sentence: res.text,
      translation: res.translation, source: res.source.tokens, unknown: res.source.unknown,
      decoding: res.beam ? "beam search (k = " + res.beam.trace.beam_size + ")" : "greedy decoding",
      output: res.tokens.map(function (id) { return M.vocab.tgt_itos[id]; }),
      panels: panels, trajectories: trajectories, title: "Hidden states: " + res.text,
      name: "seq2seq-playground-hidden", map: opts.map ? placeOnMap(opts.map, res) : null};
  }

  /** The build's map (lib.widgets.map_view.map_data, with its PCA) with the sentence of `res`
   * placed on it instead of the build's: its final state of the map's layer, projected with
   * the map's mean and components (lib.widgets.pca.PCA.project). */
  function placeOnMap(map, res) {
    var H = M.H, S = res.source.tokens.length, l = map.layer - 1;
    var ctx = res.run.encoder.subarray((l * S + S - 1) * H, (l * S + S) * H);
    var xy = map.pca.components.map(function (c) {
      var x = 0;
      for (var h = 0; h < H; h++) x += (ctx[h] - map.pca.mean[h]) * c[h];
      return x;
    });
    return Object.assign({}, map, {marks: [{label: "«" + res.text + "»", xy: xy}]});
  }

  /** A chapter's hidden-state view of `text`: greedy decoding as lib.widgets.capture_hidden
   * runs it (no source cap), drawn as hiddenData draws it. */
  async function hiddenView(text, opts) {
    var src = prepare(text), run = await decode(src.ids, null, {capped: false});
    var tr = detokenize(words(run.tokens));
    return hiddenData({text: text, source: src, run: run, tokens: run.tokens, translation: tr,
      beam: null}, opts);
  }

  /** StepperView's data (lib.widgets.stepper.stepper_data of capture_steps): `prefix` (French
   * text) forced, then greedy, each step's top_k tokens with their log P. */
  async function stepperView(text, prefix, topK) {
    var src = prepare(text), itos = M.vocab.tgt_itos, tgt = M.tgtIndex;
    var words_ = tokenize(prefix || "");
    var forced = words_.map(function (w) { return tgt.has(w) ? tgt.get(w) : M.sp.unk; });
    var run = await decode(src.ids, forced, {prefix: true, capped: false, topK: topK});
    var plain = forced.length ? await decode(src.ids, null, {capped: false}) : run;
    var steps = run.tokens.map(function (tok, t) {
      return {input: itos[t === 0 ? M.sp.sos : run.tokens[t - 1]], token: itos[tok],
        forced: t < forced.length, logp: run.logps[t], rank: run.ranks[t],
        top: run.tops[t].ids.map(function (id, j) { return [itos[id], run.tops[t].lps[j]]; }),
        prev_forced: t > 0 && t - 1 < forced.length};
    });
    var T = steps.length, logProb = run.logps.reduce(function (a, b) { return a + b; }, 0);
    return {sentence: text, T: T, start: Math.min(forced.length + 1, T), steps: steps,
      translation: detokenize(words(run.tokens)),
      prefix: detokenize(forced.map(function (id) { return itos[id]; })),
      greedy: detokenize(words(plain.tokens)), log_prob: logProb,
      prefix_unknown: words_.filter(function (w, i) { return forced[i] === M.sp.unk; }),
      capped: !T || run.tokens[T - 1] !== M.sp.eos, title: "Decoder steps: " + text,
      name: "seq2seq-stepper"};
  }

  /** BeamView's data (lib.widgets.beam.beam_data of capture_beam): beam search without the
   * source cap, as beam_explorer runs it, and greedy's path beside it. */
  async function beamView(text, k, alpha, margin) {
    var src = prepare(text);
    var beam = await beamSearch(src.ids, k, alpha, margin, {capped: false});
    var greedy = await decode(src.ids, null, {capped: false});
    var data = beamData({text: text, beam: beam, greedy: greedy,
      translation: detokenize(words(beam.tokens))});
    return Object.assign(data, {title: "Beam search: " + text, name: "seq2seq-beam"});
  }

  /** AttentionView's data (lib.widgets.attention_view.attention_data): greedy decoding with
   * the source cap, as translate() runs it, each step's weights and the P of its token, to
   * DIGITS significant digits as the build writes them. */
  async function attentionView(text) {
    if (!M.attn) throw new Error("the " + MODELS[M.name].label + " has no attention");
    var src = prepare(text), run = await decode(src.ids, null), T = run.tokens.length;
    var round = function (x) { return Number(x.toPrecision(ATTENTION_DIGITS)); };
    return {sentence: text, translation: detokenize(words(run.tokens)), source: src.tokens,
      unknown: src.unknown, output: run.tokens.map(function (id) { return M.vocab.tgt_itos[id]; }),
      weights: run.weights.map(function (w) { return Array.from(w, round); }),
      p: run.logps.map(function (lp) { return round(Math.exp(lp)); }), start: T,
      capped: !T || run.tokens[T - 1] !== M.sp.eos, title: "Attention: " + text,
      name: "seq2seq-attention"};
  }

  /** BeamView's data for a translation by beam search: its trace and greedy's path. */
  function beamData(res) {
    var trace = res.beam.trace, g = res.greedy, raw = 0;
    return Object.assign({}, trace, {sentence: res.text, translation: res.translation,
      greedy_translation: detokenize(words(g.tokens)),
      greedy: g.tokens.map(function (id, i) {
        raw += g.logps[i];
        return {text: M.vocab.tgt_itos[id], logp: g.logps[i], raw: raw,
          score: norm(raw, i + 1, trace.alpha)};
      }), title: "Beam search: " + res.text, name: "seq2seq-playground-beam"});
  }

  /** Draw view `name` (S2S.draw, then S2S.views) from `data` in `parent`, instead of its
   * previous content. */
  function mount(parent, name, data) {
    parent.textContent = "";
    S2S.mount(el("div", {"class": "s2sw s2sw-" + name}, parent), [name], data);
  }

  /** The attention heatmap of one output: rows the output tokens, columns the source tokens,
   * each cell's shade its weight a_{t,j} (data-w holds the exact float32 value). */
  function heatmap(parent, source, tokens, weights, caption) {
    parent.textContent = "";
    var table = el("table", {"class": "s2s-pg-attn"}, parent);
    el("caption", {text: caption}, table);
    var head = el("tr", {}, el("thead", {}, table)), body = el("tbody", {}, table);
    el("th", {scope: "col", text: "French \\ English"}, head);
    source.forEach(function (tok) { el("th", {scope: "col", text: tok}, head); });
    tokens.forEach(function (id, t) {
      var row = el("tr", {}, body), word = M.vocab.tgt_itos[id];
      el("th", {scope: "row", text: word}, row);
      Array.from(weights[t]).forEach(function (w, j) {
        var td = el("td", {"data-w": String(w), title: word + " ← " + source[j] + ": " + w.toFixed(3),
          style: "background:rgba(37,99,235," + w.toFixed(3) + ")" + (w > 0.55 ? ";color:#fff" : "")},
        row);
        td.textContent = w >= 0.1 ? w.toFixed(1).replace(/^0/, "") : "";
      });
    });
    return table;
  }

  /** The attention section: the translation's heatmap and, after beam search, one button per
   * finished hypothesis (best first) that shows its own. */
  function drawAttention(root, res) {
    var box = root.querySelector(".s2s-pg-attention");
    box.textContent = "";
    if (!res.weights) {
      el("p", {"class": "s2s-pg-note", text: "The reference model has no attention: it reads " +
        "one context vector at every step. Switch to the attention model to see where each " +
        "French word looks in the source."}, box);
      return;
    }
    var map = el("div", {"class": "s2s-pg-map"});
    var hyps = res.beam ? res.beam.finished : [];
    if (hyps.length) {
      var bar = el("div", {"class": "s2s-pg-hyps", role: "group",
        "aria-label": "hypotheses beam search finished, best first"}, box);
      hyps.forEach(function (h, i) {
        var b = el("button", {type: "button", "data-hyp": String(i), "aria-pressed": "false",
          text: (i + 1) + ". " + detokenize(words(h.tokens)) + " (" + h.score.toFixed(2) + ")"}, bar);
        b.addEventListener("click", function () { show(i); });
      });
    }
    box.appendChild(map);
    function show(i) {
      box.querySelectorAll("[data-hyp]").forEach(function (b) {
        b.setAttribute("aria-pressed", String(Number(b.dataset.hyp) === i));
      });
      var h = i === null ? null : hyps[i];
      heatmap(map, res.source.tokens, h ? h.tokens : res.tokens, h ? h.weights : res.weights,
        h ? "Hypothesis " + (i + 1) + " of " + hyps.length + ", score " + h.score.toFixed(3) :
          "Attention weights of the translation (" + (res.beam ? "beam search" : "greedy") + ")");
    }
    show(hyps.length ? 0 : null);
  }

  function draw(root, res) {
    var S = res.source.tokens.length;
    root.querySelector(".s2s-pg-translation").textContent = res.translation || "(nothing)";
    var src = root.querySelector(".s2s-pg-source");
    src.textContent = "Read as: ";
    res.source.tokens.forEach(function (tok, i) {
      el("span", {"class": res.source.unknown[i] ? "tok unk" : "tok",
        text: res.source.unknown[i] ? tok + " → <unk>" : tok}, src);
    });
    var nUnk = res.source.unknown.filter(Boolean).length;
    if (nUnk) {
      el("span", {"class": "s2s-pg-note", text: " " + nUnk + " of " + S + " tokens are not in " +
        "the vocabulary and are read as <unk>."}, src);
    }
    var probs = root.querySelector(".s2s-pg-probs");
    probs.textContent = "";
    var table = el("table", {}, probs), head = el("tr", {}, table), body = el("tr", {}, table);
    el("th", {text: "token"}, head); el("th", {text: "P"}, body);
    res.tokens.forEach(function (id, t) {
      el("td", {text: M.vocab.tgt_itos[id]}, head);
      el("td", {text: Math.exp(res.logps[t]).toFixed(3)}, body);
    });
    drawAttention(root, res);
    mount(root.querySelector(".s2s-pg-hidden"), "hidden", hiddenData(res));
    var tree = root.querySelector(".s2s-pg-tree");
    if (res.beam) mount(tree, "beam", beamData(res));
    else {
      tree.textContent = "";
      el("p", {"class": "s2s-pg-note", text: "Greedy search keeps one hypothesis: choose beam " +
        "search to see the tree."}, tree);
    }
  }

  // -------------------------------------------------------------------------------------------
  // The page
  // -------------------------------------------------------------------------------------------

  /** The search defaults of lib.search, as the export wrote them (vocab.json), into the form. */
  function fillDefaults(form) {
    form.k.value = M.vocab.default_beam;
    form.kval.value = form.k.value;
    form.alpha.value = M.vocab.default_alpha;
    form.margin.value = M.vocab.default_margin === null ? "" : M.vocab.default_margin;
  }

  function settings(form) {
    var margin = form.margin.value.trim();
    return {search: form.search.value, k: +form.k.value, alpha: Number(form.alpha.value),
      margin: margin === "" ? null : Number(margin)};
  }

  /** The line under the form: the weights and BLEU of the model in use. */
  function describe(root) {
    var b = M.manifest.bleu, k = M.vocab.default_beam;
    root.querySelector(".s2s-pg-model").textContent = "The " + MODELS[M.name].label + ". " +
      "Weights: " + M.manifest.weights + "." +
      (b ? " BLEU on the " + b.sentences + " test sentences, beam " + k + ": " +
      b["int8_beam" + k] + " with these weights, " + b["float32_beam" + k] +
      " in full precision (greedy: " +
      b.int8_beam1 + " and " + b.float32_beam1 + "), measured when the model was exported." : "");
  }

  function wire(root) {
    var form = root.querySelector("form"), status = root.querySelector(".s2s-pg-status");
    var error = root.querySelector(".s2s-pg-error"), result = root.querySelector(".s2s-pg-result");
    form.k.addEventListener("input", function () { form.kval.value = form.k.value; });
    function syncSearch() {
      var greedy = form.search.value === "greedy";
      [form.k, form.alpha, form.margin].forEach(function (i) { i.disabled = greedy; });
    }
    Array.prototype.forEach.call(form.search, function (r) { r.addEventListener("change", syncSearch); });
    syncSearch();
    var radios = Array.prototype.slice.call(form.querySelectorAll("input[name=model]"));
    function busy(on) {
      form.querySelector("button").disabled = on;
      radios.forEach(function (r) { r.disabled = on || (r.value === "attention" && !MODELS.attention.manifest); });
    }
    radios.forEach(function (r) {
      r.addEventListener("change", function () {
        if (!r.checked) return;
        var t0 = performance.now();
        busy(true);
        error.hidden = true;
        root.setAttribute("data-state", "switching");
        status.textContent = "Loading the " + MODELS[r.value].label + "…";
        use(r.value).then(function () {
          busy(false);
          describe(root);
          status.textContent = "The " + MODELS[r.value].label + " is loaded (" +
            Math.round(performance.now() - t0) + " ms).";
          root.setAttribute("data-state", "ready");
          if (!result.hidden) form.requestSubmit();
        }, function (e) {
          busy(false);
          radios.forEach(function (x) { x.checked = x.value === M.name; });
          error.textContent = e.message;
          error.hidden = false;
          status.textContent = "";
          root.setAttribute("data-state", "ready");
        });
      });
    });
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var t0 = performance.now();
      busy(true);
      error.hidden = true;
      status.textContent = "Translating…";
      root.setAttribute("data-state", "busy");
      translate(form.sentence.value, settings(form)).then(function (res) {
        draw(root, res);
        result.hidden = false;
        status.textContent = "Done in " + Math.round(performance.now() - t0) + " ms, in this browser.";
        busy(false);
        root.setAttribute("data-state", "done");
      }, function (e) {
        busy(false);
        error.textContent = e.message;
        error.hidden = false;
        result.hidden = true;
        status.textContent = "";
        root.setAttribute("data-state", "error");
      });
    });
    return ready.then(function () {
      fillDefaults(form);
      busy(false);
      if (!MODELS.attention.manifest) {
        form.querySelector(".s2s-pg-attn-note").textContent = "(not in this build)";
      }
      status.textContent = "Model loaded: it runs here, in this tab (offline too, until the tab is closed).";
      describe(root);
      root.setAttribute("data-state", "ready");
    }, function (e) {
      status.textContent = "The model could not be loaded: " + e.message;
      root.setAttribute("data-state", "failed");
    });
  }

  // The Playground page loads its model at once; a chapter page's live views (live.js) load
  // one with `use` when the reader first types.
  var root = document.getElementById("s2s-playground");
  var ready = root ? load() : null;
  window.S2SPlayground = {ready: ready, model: M, models: MODELS, use: use,
    normalize: normalize, tokenize: tokenize,
    detokenize: detokenize, prepare: prepare, decode: decode, beamSearch: beamSearch,
    translate: translate, words: words, hiddenData: hiddenData, beamData: beamData,
    hiddenView: hiddenView, stepperView: stepperView, beamView: beamView,
    attentionView: attentionView, InputError: InputError, preload: function (name) {
      return loadModel(name);
    }};
  if (root) wire(root);
}());

/* Live views on the chapter pages: the reader's own sentence, in the browser.
 *
 * A chapter page shows its views (the hidden-state explorer, the decoder stepper, the beam
 * explorer, the attention explorer) as the build drew them, from traces of the sentences the
 * chapter chose (lib/widgets, render.View.to_html). This script, which only the website's
 * chapter pages load (scripts/playground_site.py adds it, deferred, to the pages that hold such
 * a view), puts a small form above each of them: the sentence, and the view's own settings
 * where the kernel's live widget has them (the stepper's forced prefix, the beam size).
 *
 * Nothing heavy loads with the page. When the reader first focuses a form, the Playground's
 * engine loads (web/playground/playground.js, the widgets' drawing scripts, ONNX Runtime Web
 * and the exported int8 model: the Playground's files, so the browser's cache serves them to
 * every page of a visit); when they type, the engine recomputes the view's data as lib does
 * (S2SPlayground.hiddenView, stepperView, beamView, attentionView) and the view's own drawing
 * (S2S.draw.<name>, S2S.views.<name>, lib/widgets/static/) redraws it. Until then the view
 * shows the build's trace. The attention view runs the attention model (model/attention/),
 * every other view the reference model, the models the chapters draw their views with.
 *
 * Bad input (an empty sentence, more tokens than the model's max_src_len, a forced prefix as
 * long as the length cap) gets the engine's message under the form, and the view keeps its
 * last drawing; words outside the vocabulary are listed as read as <unk>.
 * window.S2SLive exposes the views, which tests/test_live_views.py drives.
 */
/* global S2S */
(function () {
  "use strict";

  var BASE = document.currentScript.src.replace(/[^/]*$/, "");  // .../_static/playground/
  var DEBOUNCE_MS = 400;  // a pause in typing this long redraws
  // The engine, in load order: the drawing toolkit and the views' drawings, then the engine.
  var SCRIPTS = ["widgets/common.js", "widgets/hidden.js", "widgets/map.js", "widgets/stepper.js",
    "widgets/beam.js", "widgets/attention.js", "playground.js"];
  // The views that get a form: the model they run and the drawings that make them (each
  // View's `scripts` in lib/widgets).
  var KINDS = {
    hidden: {model: "reference", names: ["hidden", "map"], what: "its states"},
    stepper: {model: "reference", names: ["stepper"], what: "its decoding, step by step"},
    beam: {model: "reference", names: ["beam"], what: "its beam search"},
    attention: {model: "attention", names: ["attention"], what: "its attention weights"},
  };

  function loadScript(src) {
    return new Promise(function (resolve, reject) {
      var s = document.createElement("script");
      s.src = src; s.onload = resolve;
      s.onerror = function () { reject(new Error("could not load " + src)); };
      document.head.appendChild(s);
    });
  }

  var engine = null;
  /** window.S2SPlayground, once its scripts have loaded (once per page). */
  function loadEngine() {
    engine = engine || SCRIPTS.reduce(function (p, src) {
      return p.then(function () { return loadScript(BASE + src); });
    }, Promise.resolve()).then(function () { return window.S2SPlayground; });
    engine.catch(function () { engine = null; });  // a failed load may be retried
    return engine;
  }

  /** The model a view runs, loaded (not yet in use: `use` switches, inside the queue). */
  function preload(kind) {
    return loadEngine().then(function (P) { return P.preload(KINDS[kind].model); });
  }

  // One computation at a time: the engine has one model in use, which a job switches to.
  var queue = Promise.resolve();
  function enqueue(job) {
    var run = queue.then(job);
    queue = run.catch(function () { return null; });
    return run;
  }

  function el(tag, attrs, parent) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (a) {
      if (a === "text") e.textContent = attrs[a]; else e.setAttribute(a, attrs[a]);
    });
    if (parent) parent.appendChild(e);
    return e;
  }

  var count = 0;
  /** A labelled input in `form`: its label and the input. */
  function field(form, label, attrs) {
    var id = "s2s-live-" + (++count), wrap = el("label", {"for": id}, form);
    wrap.textContent = label + " ";
    var input = el("input", Object.assign({id: id, type: "text", autocomplete: "off"}, attrs), wrap);
    return input;
  }

  /** The view's data, recomputed for the form's values by the engine `P` (its model in use). */
  function compute(P, view) {
    var f = view.form, data = view.built, text = f.sentence.value;
    if (view.kind === "hidden") {
      var pressed = function (group) {
        var b = view.root.querySelector("[data-group=\"" + group + "\"] [aria-pressed=\"true\"]");
        return b && b.getAttribute("data-value");
      };
      return P.hiddenView(text, {units: data.panels.enc1.units.length,
        mode: pressed("mode") || data.mode, layer: +(pressed("layer") || data.layer),
        map: data.map && data.map.pca ? data.map : null});
    }
    if (view.kind === "stepper") return P.stepperView(text, f.prefix.value, data.steps[0].top.length);
    if (view.kind === "beam") {
      var k = Number(f.k.value);
      if (!Number.isInteger(k) || k < 1 || k > Number(f.k.max)) {
        return Promise.reject(new P.InputError("The beam size k must be a whole number from 1 " +
          "to " + f.k.max + ", got «" + f.k.value + "»."));
      }
      return P.beamView(text, k, data.alpha, data.margin);
    }
    return P.attentionView(text);
  }

  /** Draw `data` in a fresh element in place of the view's, with the view's own drawings. */
  function draw(view, data) {
    var fresh = el("div", {"class": "s2sw s2sw-" + view.kind, id: view.root.id,
      "data-ready": "1", "data-live": "reader"});
    view.root.replaceWith(fresh);
    view.root = fresh;
    view.data = data;
    S2S.mount(fresh, KINDS[view.kind].names, data);
  }

  /** The line that says how the sentence was read: the words outside the vocabulary. */
  function readAs(P, view) {
    var line = view.form.querySelector(".s2s-live-read");
    line.textContent = "";
    var src = P.prepare(view.form.sentence.value);
    var unknown = src.tokens.filter(function (t, i) { return src.unknown[i]; });
    if (!unknown.length) return;
    line.appendChild(document.createTextNode("Not in the model's English vocabulary, read as " +
      "<unk>: "));
    unknown.forEach(function (t, i) {
      if (i) line.appendChild(document.createTextNode(", "));
      el("span", {"class": "tok unk", text: t + " → <unk>"}, line);
    });
  }

  /** Recompute and redraw `view` for its form's values; a newer request supersedes it. */
  function redraw(view) {
    var ticket = ++view.ticket, f = view.form;
    var status = f.querySelector(".s2s-live-status"), error = f.querySelector(".s2s-live-error");
    window.clearTimeout(view.timer);
    f.setAttribute("data-state", "busy");
    status.textContent = view.loaded ? "Computing…" : "Loading the model (once per visit)…";
    return enqueue(function () {
      return loadEngine().then(function (P) {
        return P.use(KINDS[view.kind].model).then(function () {
          if (ticket !== view.ticket) return;
          view.loaded = true;
          var t0 = performance.now();
          return compute(P, view).then(function (data) {
            if (ticket !== view.ticket) return;
            draw(view, data);
            readAs(P, view);
            error.hidden = true;
            status.textContent = "Drawn for your sentence in " +
              Math.round(performance.now() - t0) + " ms, by the " +
              P.models[KINDS[view.kind].model].label + " running in this browser.";
            f.setAttribute("data-state", "done");
          });
        });
      }).catch(function (e) {
        if (ticket !== view.ticket) return;
        error.textContent = e.name === "InputError" ? e.message :
          "The model could not run here: " + e.message;
        error.hidden = false;
        status.textContent = view.data ? "The view still shows the last sentence drawn." :
          "The view still shows the build's sentence.";
        f.setAttribute("data-state", "error");
      });
    });
  }

  /** The form above one view (the fragment's `.s2sw` element), or null for a view that has
   * no sentence to change (a toy model's table) or is not one of KINDS. */
  function setup(root) {
    var kind = (root.className.match(/\bs2sw-(\w+)/) || [])[1];
    var source = document.getElementById(root.id + "-data");
    if (!KINDS[kind] || !source || root.closest(".s2s-pg")) return null;
    var built = JSON.parse(source.textContent);
    if (!built.sentence) return null;
    var view = {kind: kind, root: root, built: built, ticket: 0, loaded: false};
    var form = el("form", {"class": "s2s-live", "data-state": "built", "data-kind": kind,
      novalidate: "", "aria-label": "Your own sentence for this view"});
    root.parentNode.insertBefore(form, root);
    view.form = form;
    field(form, "Your sentence", {name: "sentence", value: built.sentence, maxlength: "400",
      spellcheck: "true", "class": "s2s-live-sentence"});
    if (kind === "stepper") {
      field(form, "forced French prefix", {name: "prefix", value: built.prefix, lang: "fr",
        placeholder: "none: greedy"});
    }
    if (kind === "beam") {
      field(form, "beam size k", {name: "k", type: "number", min: "1", max: "10", step: "1",
        value: String(built.beam_size), inputmode: "numeric"});
    }
    el("button", {type: "submit", text: "Redraw"}, form);
    el("p", {"class": "s2s-live-status", role: "status", text: "Showing the build's sentence. " +
      "Type your own to see " + KINDS[kind].what + ": the model loads once, then runs in " +
      "this browser."}, form);
    el("p", {"class": "s2s-live-read"}, form);
    var error = el("p", {"class": "s2s-live-error", role: "alert"}, form);
    error.hidden = true;
    form.addEventListener("submit", function (e) { e.preventDefault(); redraw(view); });
    form.addEventListener("input", function () {
      window.clearTimeout(view.timer);
      view.timer = window.setTimeout(function () { redraw(view); }, DEBOUNCE_MS);
    });
    form.addEventListener("focusin", function () { preload(kind).catch(function () {}); },
      {once: true});
    return view;
  }

  function start() {
    var views = [];
    Array.prototype.forEach.call(document.querySelectorAll(".s2sw-out > .s2sw"), function (root) {
      var view = setup(root);
      if (view) views.push(view);
    });
    window.S2SLive = {views: views, redraw: redraw, engine: loadEngine};
  }

  var link = el("link", {rel: "stylesheet", href: BASE + "live.css"});
  document.head.appendChild(link);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
}());

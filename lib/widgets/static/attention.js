/* The attention explorer: S2S.draw.attention draws the heatmap of an attention decoder's
 * weights (one row per output token, one column per source token), the step buttons, the
 * source sentence shaded by the current step's weights and the output; S2S.views.attention
 * steps through the decoding: the heatmap is built up row by row, the current row highlighted
 * with its weights written in its cells.
 *
 * Keys: on the step buttons ← / → go back / forward a step, Home / End to the first / last;
 * in the heatmap (one Tab stop, then arrow keys) ↑ / ↓ go back / forward a step and ← / → (Home
 * / End) move along the source tokens of the current row. Hovering or focusing a cell writes its
 * weight in the readout (an aria-live region) and in the cell.
 *
 * data (attention_view.py's attention_data):
 *   {sentence, translation, source: [token], unknown: [bool], output: [token] (<eos> included
 *    when written), weights: [[a_{t,j} for each source token j] for each output token t] (each
 *    row sums to 1), p: [P of each output token], start (the step shown first, 1 .. T),
 *    capped (no <eos>: the length cap stopped it)}
 */
/* global S2S */
(function () {
  "use strict";

  // ColorBrewer's Blues: a weight of 0 is the first colour, 1 the last. The colours are fixed,
  // whatever the theme, so the text in a cell is chosen against the cell alone.
  var BLUES = ["#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5",
    "#08519c", "#08306b"];
  var esc = S2S.esc, short = S2S.short;

  function rgb(hex) {
    return [1, 3, 5].map(function (i) { return parseInt(hex.slice(i, i + 2), 16); });
  }

  /** The colour [r, g, b] of weight w in [0, 1] on the Blues scale. */
  function colour(w) {
    var x = Math.max(0, Math.min(1, w)) * (BLUES.length - 1), i = Math.min(Math.floor(x),
      BLUES.length - 2), f = x - i, a = rgb(BLUES[i]), b = rgb(BLUES[i + 1]);
    return a.map(function (v, k) { return Math.round(v + (b[k] - v) * f); });
  }

  /** WCAG relative luminance of a colour [r, g, b]. */
  function luminance(c) {
    var l = c.map(function (v) {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
  }

  /** Background and text colour of a cell of weight w: black or white text, whichever has the
   * higher contrast (at least 4.58:1 on any background). */
  function paint(w) {
    var c = colour(w), l = luminance(c);
    var text = (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? "#000" : "#fff";
    return "background-color:rgb(" + c.join(",") + ");color:" + text;
  }

  function fmt(w, decimals) { return w.toFixed(decimals); }

  /** Index of the largest weight of a row. */
  function argmax(row) {
    var best = 0;
    row.forEach(function (w, j) { if (w > row[best]) best = j; });
    return best;
  }

  function legend() {
    var stops = BLUES.map(function (c, i) {
      return c + " " + (100 * i / (BLUES.length - 1)).toFixed(1) + "%";
    }).join(",");
    return "<span class=\"s2s-key\">weight 0<span class=\"s2s-legend\" style=\"background:" +
      "linear-gradient(to right," + stops + ")\"></span>1</span>";
  }

  function stepButtons() {
    return "<span class=\"s2s-js s2s-attsteps\" role=\"group\" aria-label=\"decoding steps " +
      "(arrow keys step too)\">" + [["first", "First"], ["prev", "◀ Previous"],
      ["next", "Next ▶"], ["last", "Last"]].map(function (b) {
      return "<button type=\"button\" data-go=\"" + b[0] + "\">" + b[1] + "</button>";
    }).join("") + "</span><span class=\"s2s-js s2s-stepval\"></span>";
  }

  /** The source sentence, each token shaded by the current step's weight (views fill it). */
  function strip(data) {
    return "<div class=\"s2s-attsrc s2s-js\" aria-hidden=\"true\"><span class=\"lbl\">" +
      "source:</span>" + data.source.map(function (tok, j) {
      return "<span class=\"s2s-atok" + (data.unknown[j] ? " unk" : "") + "\" data-col=\"" + j +
        "\">" + esc(short(tok)) + "<small></small></span>";
    }).join("") + "</div>";
  }

  function table(data) {
    var head = "<tr><th scope=\"col\" class=\"corner\">output ↓<br>source →</th>" +
      data.source.map(function (tok, j) {
        var unk = data.unknown[j];
        return "<th scope=\"col\" class=\"src" + (unk ? " unk" : "") + "\" title=\"" +
          esc(tok + (unk ? " (not in the vocabulary: read as <unk>)" : "")) + "\"><span>" +
          esc(short(tok)) + "</span></th>";
      }).join("") + "</tr>";
    var rows = data.weights.map(function (row, t) {
      var tok = data.output[t];
      return "<tr data-step=\"" + (t + 1) + "\"><th scope=\"row\" title=\"" +
        esc("step " + (t + 1) + ": " + tok + ", P = " + fmt(data.p[t], 3)) + "\">" +
        esc(short(tok)) + "</th>" + row.map(function (w, j) {
        return "<td data-col=\"" + j + "\" tabindex=\"-1\" style=\"" + paint(w) + "\">" +
          "<span class=\"v\">" + fmt(w, 2) + "</span></td>";
      }).join("") + "</tr>";
    }).join("");
    return "<div class=\"s2s-scroll s2s-attscroll\"><table class=\"s2s-attn\" role=\"grid\" " +
      "aria-readonly=\"true\" aria-label=\"Attention weights: one row per output token, one " +
      "column per source token\"><thead>" + head + "</thead><tbody>" + rows +
      "</tbody></table></div>";
  }

  function summary(data) {
    var lines = ["Greedy decoding writes: «" + (esc(data.translation) || "(nothing)") + "» (" +
      data.output.length + " steps, " + data.source.length + " source tokens)."];
    if (data.capped) lines.push("It stopped at the length cap before writing &lt;eos&gt;.");
    return "<p class=\"s2s-summary\">" + lines.join("<br>") + "</p>";
  }

  S2S.draw.attention = function (data) {
    return S2S.header("Attention while decoding «" + esc(data.sentence) + "»", false) +
      "<p class=\"s2s-sub\">Before writing each word, the decoder weighs every source token " +
      "(columns); a row holds one step's weights, which sum to 1. Step through the decoding " +
      "with the buttons or the arrow keys; in the heatmap, ↑ ↓ step and ← → move along the " +
      "source. Hover or focus a cell for its weight.</p><div class=\"s2s-bar\">" +
      stepButtons() + legend() + "</div><div class=\"s2s-readout s2s-attout\" " +
      "aria-live=\"polite\"></div>" + strip(data) + table(data) + summary(data);
  };

  S2S.views.attention = function (root, data, kit) {
    var q = kit.q, qa = kit.qa;
    var T = data.output.length, S = data.source.length, st = {t: data.start, col: 0};
    var out = q(".s2s-attout"), grid = q(".s2s-attn"), rows = qa("tbody tr", grid);
    var chips = qa(".s2s-atok");

    function cell(t, j) { return rows[t - 1].querySelectorAll("td")[j]; }
    function said(t, j) {
      return "Step " + t + " writes «" + esc(data.output[t - 1]) + "»: weight on «" +
        esc(data.source[j]) + "» = " + fmt(data.weights[t - 1][j], 3) + ".";
    }
    function stepSaid(t) {
      var row = data.weights[t - 1], j = argmax(row);
      return "Step " + t + " of " + T + ": the decoder writes «" + esc(data.output[t - 1]) +
        "» (P = " + fmt(data.p[t - 1], 2) + "), drawing most on «" + esc(data.source[j]) +
        "» (weight " + fmt(row[j], 2) + ").";
    }

    /** Show steps 1 .. t; the active cell (the grid's one Tab stop) is (t, col). */
    function show(t, col, focus) {
      st.t = Math.max(1, Math.min(T, t));
      st.col = Math.max(0, Math.min(S - 1, col));
      rows.forEach(function (r, i) {
        r.classList.toggle("later", i + 1 > st.t);
        r.classList.toggle("now", i + 1 === st.t);
        var th = r.querySelector("th");
        if (i + 1 === st.t) th.setAttribute("aria-current", "step");
        else th.removeAttribute("aria-current");
      });
      qa("td", grid).forEach(function (c) { c.setAttribute("tabindex", "-1"); });
      var active = cell(st.t, st.col);
      active.setAttribute("tabindex", "0");
      var row = data.weights[st.t - 1];
      chips.forEach(function (chip, j) {
        chip.setAttribute("style", paint(row[j]));
        chip.querySelector("small").textContent = fmt(row[j], 2);
      });
      qa("[data-go]").forEach(function (b) {
        var to = b.getAttribute("data-go"), back = to === "first" || to === "prev";
        b.setAttribute("aria-disabled", String(back ? st.t === 1 : st.t === T));
      });
      q(".s2s-stepval").textContent = "step " + st.t + " / " + T;
      if (focus) {
        active.focus();
        out.innerHTML = said(st.t, st.col);
      } else {
        out.innerHTML = stepSaid(st.t);
      }
    }
    function go(where) {
      var t = {first: 1, prev: st.t - 1, next: st.t + 1, last: T}[where];
      show(t, argmax(data.weights[Math.max(1, Math.min(T, t)) - 1]), false);
    }

    qa("[data-go]").forEach(function (b) {
      b.addEventListener("click", function () { go(b.getAttribute("data-go")); });
    });
    q(".s2s-attsteps").addEventListener("keydown", function (ev) {
      var where = {ArrowLeft: "prev", ArrowUp: "prev", ArrowRight: "next", ArrowDown: "next",
        Home: "first", End: "last"}[ev.key];
      if (!where) return;
      ev.preventDefault();
      go(where);
    });
    grid.addEventListener("keydown", function (ev) {
      var move = {ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1],
        Home: [0, -S], End: [0, S]}[ev.key];
      if (!move || !ev.target.matches("td")) return;
      ev.preventDefault();
      show(st.t + move[0], st.col + move[1], true);
    });
    rows.forEach(function (r, i) {
      qa("td", r).forEach(function (c, j) {
        c.addEventListener("mouseenter", function () {
          if (i + 1 <= st.t) out.innerHTML = said(i + 1, j);
        });
        c.addEventListener("focus", function () { out.innerHTML = said(i + 1, j); });
        c.addEventListener("click", function () { if (i + 1 <= st.t) show(i + 1, j, true); });
      });
    });
    grid.addEventListener("mouseleave", function () {
      if (!grid.contains(document.activeElement)) out.innerHTML = stepSaid(st.t);
    });
    show(data.start, argmax(data.weights[data.start - 1]), false);
  };
}());

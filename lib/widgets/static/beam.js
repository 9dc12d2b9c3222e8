/* The beam explorer: S2S.draw.beam draws the tree of hypotheses that beam search considered
 * (which stayed in the beam, which were pruned, which finished, the winner's path and, beside
 * it, the path greedy search takes), the captions, the summary and the finished table from the
 * search's trace; S2S.views.beam wires the step slider that replays the search column by column,
 * the checkbox that hides the pruned hypotheses, and the switch between log P and log P / L^α.
 *
 * data (beam.py's BeamView, or the Playground's playground.js): a lib.search.BeamTrace as a
 * dict {beam_size, alpha, margin (null: no pruning), max_len, winner (a node id),
 *       nodes: [{id, parent (null for the root), step, text, raw (log P), score (raw / step^α),
 *                status: "kept" | "pruned" | "finished"}]},
 * and {sentence, translation (the winner's), greedy_translation,
 *      greedy: [per greedy step: {text, logp, raw (running log P), score (raw / step^α)}]}.
 */
/* global S2S */
(function () {
  "use strict";

  var BW = 72, BH = 32, DX = 86, DY = 40;  // node box width/height, column and row spacing
  var ML = 8, TOP = 8;  // the tree's left and top margins
  var GREEDY_GAP = 26;  // between the tree's lowest row and the greedy strip
  var BOX_CHARS = 10;  // a token's characters that fit a box
  var MARGIN = 24;  // pixels kept beside the current column when it is scrolled into view

  var esc = S2S.esc, fmt = S2S.fmt;

  function lastStep(nodes) {
    return Math.max.apply(null, nodes.map(function (n) { return n.step; }));
  }

  function byId(nodes) {
    var out = {};
    nodes.forEach(function (n) { out[n.id] = n; });
    return out;
  }

  /** Node ids from the root to `id`. */
  function pathIds(by, id) {
    var ids = [];
    for (; id !== null && id !== undefined; id = by[id].parent) ids.unshift(id);
    return ids;
  }

  function tokens(by, id) {
    return pathIds(by, id).slice(1).map(function (i) { return by[i].text; });
  }

  /** {id: [x, y]}: one column per step, children grouped under their parent's row order and
   * sorted by log-probability, so the tree's branches cross as little as possible. */
  function layout(nodes) {
    var steps = [], row = {}, pos = {};
    nodes.forEach(function (n) { (steps[n.step] = steps[n.step] || []).push(n); });
    steps.forEach(function (column, step) {
      column.slice().sort(function (a, b) {
        return (row[a.parent] || 0) - (row[b.parent] || 0) || b.raw - a.raw;
      }).forEach(function (n, r) {
        row[n.id] = r;
        pos[n.id] = [ML + step * DX, TOP + r * DY];
      });
    });
    return pos;
  }

  /** One sentence per step that says what happened, for the readout under the slider. */
  function captions(data) {
    var nodes = data.nodes, by = byId(nodes), last = lastStep(nodes), best = null;
    var out = ["Step 0: the beam holds a single hypothesis, &lt;sos&gt;. Each step extends " +
      "every live hypothesis by every token and keeps the " + data.beam_size + " most probable" +
      (data.margin === null ? "." : ", unless they fall more than " + data.margin +
        " below the step's best.")];
    for (var step = 1; step <= last; step++) {
      var count = {kept: 0, finished: 0, pruned: 0}, here = 0;
      nodes.forEach(function (n) {
        if (n.step !== step) return;
        here += 1;
        count[n.status] += 1;
        if (n.status === "finished" && (best === null || n.score > best.score)) best = n;
      });
      var text = "Step " + step + ": of the " + here + " best candidates, " + count.kept +
        " stay in the beam, " + count.finished + " finished, " + count.pruned + " pruned.";
      if (best !== null) {
        text += " Best finished so far: «" + esc(tokens(by, best.id).join(" ")) + "» (score " +
          fmt(best.score) + ").";
      }
      out.push(text);
    }
    if (last === data.max_len) {
      out[last] += " The length cap is reached: what is still in the beam counts as finished.";
    } else if (nodes.some(function (n) { return n.step === last && n.status === "kept"; })) {
      out[last] += " The search stops: no hypothesis left in the beam can beat the best " +
        "finished one any more, however it continues.";
    }
    return out;
  }

  /** A box: a token and its score, log P shown, log P / L^α kept in data-norm. */
  function box(cls, step, x, y, tip, text, raw, score) {
    return "<g class=\"" + cls + "\" data-step=\"" + step + "\" transform=\"translate(" + x + " " +
      y + ")\"><title>" + esc(tip) + "</title><rect width=\"" + BW + "\" height=\"" + BH +
      "\" rx=\"5\"/><text x=\"" + BW / 2 + "\" y=\"13\">" + esc(S2S.short(text, BOX_CHARS)) +
      "</text><text class=\"sc\" x=\"" + BW / 2 + "\" y=\"26\" data-norm=\"" + fmt(score) +
      "\">" + fmt(raw) + "</text></g>";
  }

  function curve(x1, y1, x2, y2) {
    var mx = (x1 + x2) / 2;
    return "M" + x1 + " " + y1 + "C" + mx + " " + y1 + " " + mx + " " + y2 + " " + x2 + " " + y2;
  }

  /** Edges parent -> child, one <path> per (step, status): shown and hidden together. */
  function edges(nodes, pos, onPath) {
    var keys = [], groups = {};
    nodes.forEach(function (n) {
      if (n.parent === null) return;
      var p = pos[n.parent], c = pos[n.id];
      var cls = "edge " + n.status + (onPath[n.id] ? " win" : ""), key = n.step + "|" + cls;
      if (!groups[key]) {
        keys.push(key);
        groups[key] = {step: n.step, cls: cls, d: []};
      }
      groups[key].d.push(curve(p[0] + BW, p[1] + BH / 2, c[0], c[1] + BH / 2));
    });
    return keys.map(function (k) {
      var g = groups[k];
      return "<path class=\"" + g.cls + "\" data-step=\"" + g.step + "\" d=\"" + g.d.join("") +
        "\"/>";
    });
  }

  /** The tree's SVG: edges, then the boxes, the G marks of greedy's path, the greedy strip. */
  function treeSvg(data) {
    var nodes = data.nodes, by = byId(nodes), last = lastStep(nodes), pos = layout(nodes);
    var greedy = data.greedy, onPath = {}, rows = 0, perStep = [];
    pathIds(by, data.winner).forEach(function (id) { onPath[id] = true; });
    var greedyText = greedy.map(function (g) { return g.text; });
    nodes.forEach(function (n) { perStep[n.step] = (perStep[n.step] || 0) + 1; });
    perStep.forEach(function (c) { rows = Math.max(rows, c); });
    var gy = TOP + rows * DY + GREEDY_GAP;  // the greedy strip under the tree
    var width = ML + Math.max(last, greedy.length) * DX + BW + 12, height = gy + BH + 10;
    var parts = edges(nodes, pos, onPath);  // under the boxes
    nodes.forEach(function (n) {
      var x = pos[n.id][0], y = pos[n.id][1];
      var status = n.text === "<eos>" || n.status !== "finished" ? n.status :
        "finished at the length cap";
      var cls = "node " + (n.parent === null ? "root" : n.status) + (onPath[n.id] ? " win" : "");
      parts.push(box(cls, n.step, x, y, n.text + " · " + status + " · log P " + n.raw.toFixed(3) +
        " · score " + n.score.toFixed(3), n.text, n.raw, n.score));
      // on greedy's path: the node whose tokens are greedy's first `step` tokens
      if (n.step && tokens(by, n.id).join("\u0000") ===
          greedyText.slice(0, n.step).join("\u0000")) {
        parts.push("<g data-step=\"" + n.step + "\"><title>on greedy's path</title>" +
          "<circle class=\"gb\" cx=\"" + (x + BW - 2) + "\" cy=\"" + (y + 2) + "\" r=\"6\"/>" +
          "<text x=\"" + (x + BW - 2) + "\" y=\"" + (y + 5) + "\">G</text></g>");
      }
    });
    parts.push("<text class=\"glabel\" x=\"" + ML + "\" y=\"" + (gy + BH / 2 + 4) +
      "\">greedy →</text>");
    greedy.forEach(function (g, j) {
      var step = j + 1, x = ML + step * DX;
      if (step > 1) {
        parts.push("<path class=\"gedge\" data-step=\"" + step + "\" d=\"" +
          curve(x - DX + BW, gy + BH / 2, x, gy + BH / 2) + "\"/>");
      }
      parts.push(box("gnode", step, x, gy, "greedy step " + step + ": " + g.text + " · P = " +
        Math.exp(g.logp).toFixed(3), g.text, g.raw, g.score));
    });
    return "<div class=\"s2s-scroll\" tabindex=\"0\" role=\"region\" aria-label=\"the tree, " +
      "scrollable\"><svg class=\"s2s-fig s2s-tree final\" viewBox=\"0 0 " +
      width + " " + height + "\" width=\"" + width + "\" height=\"" + height + "\" " +
      "style=\"max-width:none\" role=\"img\" aria-label=\"beam search tree\">" + parts.join("") +
      "</svg></div>";
  }

  /** The finished hypotheses, best score first, the winner starred. */
  function finishedTable(data) {
    var by = byId(data.nodes);
    var rows = data.nodes.filter(function (n) { return n.status === "finished"; })
      .sort(function (a, b) { return b.score - a.score; }).map(function (n) {
        var win = n.id === data.winner;
        return "<tr data-step=\"" + n.step + "\"" + (win ? " class=\"win\"" : "") +
          "><td class=\"l\">" + esc(tokens(by, n.id).join(" ")) + "</td><td>" + n.step +
          "</td><td>" + fmt(n.raw, 3) + "</td><td>" + fmt(n.score, 3) + "</td><td>" +
          (win ? "★ winner" : "") + "</td></tr>";
      });
    return "<table><tr><th class=\"l\">finished hypothesis</th><th>step</th><th>log P</th>" +
      "<th>score</th><th></th></tr>" + rows.join("") + "</table>";
  }

  /** Beam's and greedy's outputs with their log P and score, and which one won and why. */
  function summary(data) {
    var win = byId(data.nodes)[data.winner], g = data.greedy[data.greedy.length - 1];
    var gRaw = g ? g.raw : 0, gScore = g ? g.score : 0;
    // a winner no more probable than greedy's output either scores higher (alpha > 0), or
    // greedy's path left the beam: had its output been finished, it would have won
    var verdict = data.translation === data.greedy_translation ? "Beam and greedy agree." :
      win.raw > gRaw ? "Beam search found a more probable sentence than greedy." :
        win.score > gScore ? "Beam's winner is less probable than greedy's output but " +
          "scores higher once normalised by length." :
          "Greedy's output is more probable and scores at least as high, but its path left " +
          "the beam (not among the k best, or pruned).";
    return "<p class=\"s2s-summary\"><b style=\"color:var(--win-fg)\">Beam</b> (k = " +
      data.beam_size + ", α = " + data.alpha + "): «" + esc(data.translation) + "» · log P = " +
      fmt(win.raw, 3) + " · score = " + fmt(win.score, 3) + "<br><b style=\"color:" +
      "var(--greedy-fg)\">Greedy</b>: «" + esc(data.greedy_translation) + "» · log P = " +
      fmt(gRaw, 3) + " · score = " + fmt(gScore, 3) + "<br>" + verdict + "</p>";
  }

  function legend() {
    return [["keep", "in the beam"], ["prune", "pruned"], ["fin", "finished"],
      ["win", "winner's path"]].map(function (k) {
      return "<span class=\"s2s-key\"><i style=\"border-color:var(--" + k[0] +
        ");background:var(--" + k[0] + "-bg)" + (k[0] === "prune" ? ";border-style:dashed" : "") +
        "\"></i>" + k[1] + "</span>";
    }).join("") + "<span class=\"s2s-key\"><span class=\"s2s-dot\" style=\"background:" +
      "var(--greedy)\"></span>G: on greedy's path</span>";
  }

  function controls(last) {
    return S2S.slider("step", 0, last, last, "step") + "<span class=\"s2s-js s2s-stepval\">" +
      "</span><label class=\"s2s-js\"><input type=\"checkbox\" data-toggle=\"pruned\" checked> " +
      "show pruned</label>" + S2S.buttonGroup("score", [["raw", "log P"],
      ["norm", "log P / L^α"]], "raw", "scores:");
  }

  S2S.draw.beam = function (data) {
    var pruning = data.margin === null ? "" : ", minus those more than " + data.margin +
      " below the step's best (pruned)";
    return S2S.header("Beam search" + (data.sentence ? " on «" + esc(data.sentence) + "»" : "")) +
      "<p class=\"s2s-sub\">Every step keeps the " + data.beam_size + " best hypotheses by " +
      "log P" + pruning + "; a hypothesis that ends with &lt;eos&gt; leaves the beam and is " +
      "scored by log P / L^α (L = its length, α = " + data.alpha + "). Boxes show a token and " +
      "the log P of the hypothesis ending there.</p><div class=\"s2s-bar\">" +
      controls(lastStep(data.nodes)) + "</div><div>" + legend() + "</div>" + treeSvg(data) +
      "<div class=\"s2s-readout s2s-beamout\"></div>" + summary(data) + finishedTable(data);
  };

  S2S.views.beam = function (root, data, kit) {
    var q = kit.q, qa = kit.qa, press = kit.press;
    var tree = q(".s2s-tree"), last = lastStep(data.nodes), scroll = q(".s2s-scroll");
    var sl = q("[data-slider=\"step\"]"), out = q(".s2s-beamout"), mode = "raw";
    var says = captions(data);
    function show(t, keepScroll) {
      qa("[data-step]", tree).forEach(function (el) {
        var k = +el.getAttribute("data-step");
        el.style.display = k <= t ? "" : "none";
        el.classList.toggle("now", k === t && t > 0 && t < last);
      });
      tree.classList.toggle("final", t === last);
      qa("tr[data-step]").forEach(function (r) {
        r.style.display = +r.getAttribute("data-step") <= t ? "" : "none";
      });
      q(".s2s-stepval").textContent = t + " / " + last;
      out.innerHTML = says[t];
      if (keepScroll) return;
      var left = ML + t * DX, right = left + BW;  // keep column t in view
      if (right > scroll.scrollLeft + scroll.clientWidth) {
        scroll.scrollLeft = right - scroll.clientWidth + MARGIN;
      }
      if (left < scroll.scrollLeft) scroll.scrollLeft = Math.max(0, left - MARGIN);
    }
    sl.addEventListener("input", function () { show(+sl.value); });
    q("[data-toggle=\"pruned\"]").addEventListener("change", function (ev) {
      tree.classList.toggle("hide-pruned", !ev.target.checked);
    });
    qa("[data-group=\"score\"] button").forEach(function (b) {
      b.addEventListener("click", function () {
        mode = b.getAttribute("data-value");
        press(q("[data-group=\"score\"]"), mode);
        qa(".sc", tree).forEach(function (s) {
          if (!s.hasAttribute("data-raw")) s.setAttribute("data-raw", s.textContent);
          s.textContent = s.getAttribute("data-" + mode);
        });
      });
    });
    show(last, true);
  };
}());

/* The hidden-state explorer: S2S.draw.hidden draws it from its data (heatmaps of every layer's
 * encoder and decoder states, the PCA trajectory of each layer, the controls); S2S.views.hidden
 * wires the encoder/decoder and layer buttons, the time-step slider that replays the
 * trajectory, and the readout of a hovered token or heatmap cell.
 *
 * data (hidden.py's HiddenView, or the Playground's playground.js):
 *   {S, T (tokens read, written), L, H (layers, units), mode: "enc" | "dec", layer (from 1),
 *    sentence, translation, decoding (what wrote the output), source, unknown (per source
 *    token: not in the vocabulary), output,
 *    panels: {<mode><layer>: {units (the rows shown, top first),
 *                             vals (int8 value * 127, time-major: T x units, base64)}},
 *    trajectories: [per layer: {xy: [[PC1, PC2] of each state, encoder's then decoder's],
 *                               explained: [share of the variance of PC1, of PC2]}]}
 */
/* global S2S */
(function () {
  "use strict";

  var WIDTH = S2S.WIDTH;  // SVG user units; the SVGs scale down to narrower columns
  var ENC = "#2563eb", DEC = "#ea580c";  // encoder blue, decoder orange
  // A diverging blue-white-red scale for GRU states, which lie in (-1, 1) (ColorBrewer RdBu).
  var DIVERGING = [[33, 102, 172], [103, 169, 207], [247, 247, 247], [239, 138, 98],
    [178, 24, 43]];
  // Heatmap layout (SVG units). Rows are ROW_HEIGHT high until the map would exceed
  // HEAT_MAX_HEIGHT (48 rows), then they shrink; a column is at most COLUMN_MAX wide.
  var HEAT_LEFT = 40, HEAT_TOP = 6;  // room for the "N units" axis label; top margin
  var COLUMN_MAX = 64, ROW_HEIGHT = 5, HEAT_MAX_HEIGHT = 240;
  var CHAR_WIDTH = 6.8;  // about one character of the 12 px token labels
  var LABEL_GAP = 14;  // from the heatmap's bottom to the labels' baseline
  var LABEL_MAX_HEIGHT = 80;  // room for labels rotated when they do not fit their column
  // The trajectory: the points inside a padded box within the axes (S2S.axes).
  var TRAJECTORY_HEIGHT = 270, TRAJECTORY_PAD = 16;
  var POINT_LABEL = 11, POINT_CHAR = 6.2;  // a point label's font size and about one character

  var esc = S2S.esc, short = S2S.short;

  /** A panel's values (int8 / 127, base64) as numbers, decoded once. */
  function values(panel) {
    if (!panel.values) {
      var bytes = atob(panel.vals), out = [];
      for (var i = 0; i < bytes.length; i++) {
        var b = bytes.charCodeAt(i);
        out.push((b > 127 ? b - 256 : b) / 127);
      }
      panel.values = out;
    }
    return panel.values;
  }

  /** v in [-1, 1] -> [r, g, b] on the diverging scale. */
  function colour(v) {
    var pos = (Math.max(-1, Math.min(1, v)) + 1) / 2 * (DIVERGING.length - 1);
    var lo = Math.min(Math.floor(pos), DIVERGING.length - 2), f = pos - lo;
    return DIVERGING[lo].map(function (c, i) {
      return Math.round(c * (1 - f) + DIVERGING[lo + 1][i] * f);
    });
  }

  function gradient() {
    return "linear-gradient(to right, " + DIVERGING.map(function (c) {
      return "rgb(" + c.join(", ") + ")";
    }).join(", ") + ")";
  }

  /** The heatmap as a PNG data: URI, one pixel per cell (units x time): compact, and the
   * saved HTML and PNG carry it. */
  function heatImage(vals, T, N) {
    var canvas = document.createElement("canvas");
    canvas.width = T;
    canvas.height = N;
    var ctx = canvas.getContext("2d"), img = ctx.createImageData(T, N);
    for (var t = 0; t < T; t++) {
      for (var r = 0; r < N; r++) {
        var rgb = colour(vals[t * N + r]), o = (r * T + t) * 4;
        img.data[o] = rgb[0];
        img.data[o + 1] = rgb[1];
        img.data[o + 2] = rgb[2];
        img.data[o + 3] = 255;
      }
    }
    ctx.putImageData(img, 0, 0);
    return canvas.toDataURL("image/png");
  }

  /** One heatmap panel: the states of one layer of the encoder or the decoder. */
  function heatmap(data, mode, layer) {
    var key = mode + layer, panel = data.panels[key], N = panel.units.length;
    var labels = mode === "enc" ? data.source : data.output, T = labels.length;
    var unknown = mode === "enc" ? data.unknown : [], tint = mode === "enc" ? ENC : DEC;
    var ml = HEAT_LEFT, top = HEAT_TOP;
    var cw = Math.min(COLUMN_MAX, (WIDTH - ml - 8) / T), ch = Math.min(ROW_HEIGHT, HEAT_MAX_HEIGHT / N);
    var hw = cw * T, hh = ch * N;
    var longest = CHAR_WIDTH * Math.max.apply(null, labels.map(function (t) { return t.length; }));
    var rotate = labels.some(function (t) { return t.length * CHAR_WIDTH > cw - 4; });
    var height = top + hh + LABEL_GAP + (rotate ? Math.min(LABEL_MAX_HEIGHT, longest) : 8);
    var box = " y=\"" + (top - 1) + "\" width=\"" + cw.toFixed(2) + "\" height=\"" +
      (hh + 2).toFixed(2) + "\" style=\"display:none\"/>";
    var parts = [
      "<svg class=\"s2s-fig\" viewBox=\"0 0 " + WIDTH + " " + height.toFixed(0) + "\" width=\"" +
        WIDTH + "\" role=\"img\" aria-label=\"heatmap of " + key + "\">",
      "<image href=\"" + heatImage(values(panel), T, N) + "\" x=\"" + ml + "\" y=\"" + top +
        "\" width=\"" + hw.toFixed(2) + "\" height=\"" + hh.toFixed(2) +
        "\" preserveAspectRatio=\"none\"/>",
      "<rect x=\"" + ml + "\" y=\"" + top + "\" width=\"" + hw.toFixed(2) + "\" height=\"" +
        hh.toFixed(2) + "\" fill=\"none\" stroke=\"var(--line)\"/>",
      "<text class=\"axl\" transform=\"translate(14 " + (top + hh / 2).toFixed(0) +
        ") rotate(-90)\" text-anchor=\"middle\">" + N + " units</text>",
      "<rect class=\"hl\" x=\"0\"" + box, "<rect class=\"cur\" x=\"0\"" + box];
    var y = top + hh + LABEL_GAP;
    labels.forEach(function (tok, t) {
      var x = ml + cw * (t + 0.5), unk = unknown[t];
      var tip = unk ? tok + ": not in the vocabulary, read as <unk>" : tok;
      var pos = rotate ? "transform=\"translate(" + x.toFixed(1) + " " + (y - 4).toFixed(0) +
        ") rotate(-45)\" text-anchor=\"end\"" :
        "x=\"" + x.toFixed(1) + "\" y=\"" + y.toFixed(0) + "\" text-anchor=\"middle\"";
      // focusable: the keyboard reads a token's states as the mouse does by hovering it
      parts.push("<text class=\"" + (unk ? "tok unk" : "tok") + "\" data-col=\"" + t + "\" " + pos +
        " tabindex=\"0\" style=\"fill:" + tint + "\"><title>" + esc(tip) + "</title>" +
        esc(short(tok)) + "</text>");
    });
    parts.push("</svg>");
    var what = mode === "enc" ? "h<sub>t</sub><sup>" + layer + "</sup> after reading each " +
      "source token" : "s<sub>t</sub><sup>" + layer + "</sup> after each step, under the " +
      "token it predicted";
    var chosen = N < data.H ? "the " + N + " of " + data.H + " units that vary most over the " +
      "sentence" : "all " + data.H + " units";
    return "<div class=\"s2s-panel s2s-heat\" data-key=\"" + key + "\" data-mode=\"" + mode +
      "\" data-layer=\"" + layer + "\" data-x0=\"" + ml + "\" data-y0=\"" + top +
      "\" data-cw=\"" + cw.toFixed(4) + "\" data-ch=\"" + ch.toFixed(4) + "\"><h4>" +
      (mode === "enc" ? "Encoder" : "Decoder") + " · layer " + layer + "</h4>" +
      "<p class=\"s2s-sub\">" + what + ": " + chosen + ", sorted by their last value. " +
      "−1<span class=\"s2s-legend\" style=\"background:" + gradient() + "\"></span>+1</p>" +
      parts.join("") + "</div>";
  }

  // Where a point's label may go, tried in this order: [dx, dy of the baseline, anchor].
  var LABEL_SPOTS = [[6, -6, "start"], [-6, -6, "end"], [6, 14, "start"], [-6, 14, "end"],
    [0, -9, "middle"], [0, 18, "middle"], [9, 4, "start"], [-9, 4, "end"]];

  /** A spot for each point's label, none overlapping another label, a point or the box
   * [x0, y0, x1, y1]; a label with no free spot stays at its first spot, marked crowded (shown
   * only while its step is the current or hovered one). */
  function placeLabels(xy, texts, box) {
    var taken = [], R = 4;  // boxes of the labels placed so far; a point's radius
    function overlaps(a, b) { return a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3]; }
    function rect(p, spot, w) {
      var x = p[0] + spot[0], y = p[1] + spot[1];
      var left = spot[2] === "start" ? x : spot[2] === "end" ? x - w : x - w / 2;
      return [left, y - POINT_LABEL + 2, left + w, y + 3];
    }
    var points = xy.map(function (p) { return [p[0] - R, p[1] - R, p[0] + R, p[1] + R]; });
    return xy.map(function (p, j) {
      var w = texts[j].length * POINT_CHAR;
      for (var k = 0; k < LABEL_SPOTS.length; k++) {
        var r = rect(p, LABEL_SPOTS[k], w);
        var free = r[0] >= box[0] && r[1] >= box[1] && r[2] <= box[2] && r[3] <= box[3] &&
          !taken.some(function (t) { return overlaps(r, t); }) &&
          !points.some(function (q) { return overlaps(r, q); });
        if (free) {
          taken.push(r);
          return {x: p[0] + LABEL_SPOTS[k][0], y: p[1] + LABEL_SPOTS[k][1],
            anchor: LABEL_SPOTS[k][2], crowded: false};
        }
      }
      return {x: p[0] + LABEL_SPOTS[0][0], y: p[1] + LABEL_SPOTS[0][1],
        anchor: LABEL_SPOTS[0][2], crowded: true};
    });
  }

  function dot(style) { return "<span class=\"s2s-dot\" style=\"" + style + "\"></span>"; }

  /** One layer's states as a path on their two main directions. */
  function trajectory(data, layer) {
    var S = data.S, T = data.T, tr = data.trajectories[layer - 1];
    var height = TRAJECTORY_HEIGHT, ml = S2S.AXIS_LEFT, pad = TRAJECTORY_PAD;
    var xy = S2S.fit(tr.xy, ml + pad, pad, WIDTH - ml - 2 * pad,
      height - S2S.AXIS_BOTTOM - 2 * pad);
    var labels = data.source.concat(data.output);
    var spots = placeLabels(xy, labels.map(function (t) { return short(t); }),
      [ml, 0, WIDTH, height - S2S.AXIS_BOTTOM]);
    var parts = ["<svg class=\"s2s-fig\" viewBox=\"0 0 " + WIDTH + " " + height + "\" width=\"" +
      WIDTH + "\" role=\"img\" aria-label=\"PCA trajectory of layer " + layer + "\">",
      S2S.axes(height, WIDTH, tr.explained)];
    for (var i = 1; i < S + T; i++) {  // segment from state i-1 to state i, shown from step i+1
      parts.push("<line class=\"seg\" data-t=\"" + (i + 1) + "\" x1=\"" + xy[i - 1][0].toFixed(1) +
        "\" y1=\"" + xy[i - 1][1].toFixed(1) + "\" x2=\"" + xy[i][0].toFixed(1) + "\" y2=\"" +
        xy[i][1].toFixed(1) + "\" stroke=\"" + (i < S ? ENC : DEC) + "\"/>");
    }
    parts.push("<circle cx=\"" + xy[S - 1][0].toFixed(1) + "\" cy=\"" + xy[S - 1][1].toFixed(1) +
      "\" r=\"9\" fill=\"none\" stroke=\"" + ENC + "\" stroke-dasharray=\"2 2\" data-t=\"" + S +
      "\"><title>h_S: the encoder's last state, handed to the decoder as its first state" +
      "</title></circle>");
    xy.forEach(function (p, j) {
      var tint = j < S ? ENC : DEC, who = j < S ? "encoder reads" : "decoder writes";
      var x = p[0].toFixed(1), y = p[1].toFixed(1), spot = spots[j];
      parts.push("<circle class=\"pt\" data-t=\"" + (j + 1) + "\" cx=\"" + x + "\" cy=\"" + y +
        "\" r=\"4\" fill=\"" + tint + "\"><title>step " + (j + 1) + ": " + who + " " +
        esc(labels[j]) + "</title></circle><text class=\"pl" + (spot.crowded ? " crowded" : "") +
        "\" data-t=\"" + (j + 1) + "\" x=\"" + spot.x.toFixed(1) + "\" y=\"" + spot.y.toFixed(1) +
        "\" text-anchor=\"" + spot.anchor + "\" style=\"fill:" + tint + "\">" +
        esc(short(labels[j])) + "</text>");
    });
    parts.push("</svg>");
    return "<div class=\"s2s-panel s2s-traj\" data-layer=\"" + layer + "\"><h4>Trajectory of " +
      "layer " + layer + "'s state</h4><p class=\"s2s-sub\">Each dot is the state after one " +
      "step, drawn on the two directions along which this sentence's states vary most (PCA)." +
      "<br><span class=\"s2s-key\">" + dot("background:" + ENC) + "encoder reads</span>" +
      "<span class=\"s2s-key\">" + dot("background:" + DEC) + "decoder writes</span>" +
      "<span class=\"s2s-key\">" + dot("border:1.5px dashed " + ENC) + "the encoder's last " +
      "state, where the decoder starts</span></p>" + parts.join("") + "</div>";
  }

  S2S.draw.hidden = function (data) {
    var L = data.L, S = data.S, T = data.T, layers = [], panels = [], trajs = [];
    for (var layer = 1; layer <= L; layer++) {
      layers.push([String(layer), "Layer " + layer]);
      panels.push(heatmap(data, "enc", layer), heatmap(data, "dec", layer));
      trajs.push(trajectory(data, layer));
    }
    return S2S.header("Inside the model: «" + esc(data.sentence) + "» → «" +
        (esc(data.translation) || "(nothing)") + "»") +
      "<p class=\"s2s-sub\">" + L + " layers of " + data.H + " units; " + esc(data.decoding) +
      " wrote " + T + " tokens.</p><div class=\"s2s-bar\">" +
      S2S.buttonGroup("mode", [["enc", "Encoder"], ["dec", "Decoder"]], data.mode) +
      S2S.buttonGroup("layer", layers, data.layer) + "</div>" + panels.join("") +
      "<div class=\"s2s-bar\">" + S2S.slider("t", 1, S + T, S + T, "time step") +
      "<span class=\"s2s-js s2s-tval\"></span></div><div class=\"s2s-readout s2s-hidout\"></div>" +
      trajs.join("");
  };

  S2S.views.hidden = function (root, data, kit) {
    var q = kit.q, qa = kit.qa, press = kit.press;
    var S = data.S, T = data.T, st = {mode: data.mode, layer: data.layer, t: S + T};
    var readout = q(".s2s-hidout");
    function say(html) { readout.innerHTML = html; }
    function who(t) {
      return t <= S ? "the encoder reads <b>" + esc(data.source[t - 1]) + "</b>"
        : "the decoder writes <b>" + esc(data.output[t - S - 1]) + "</b>";
    }
    function render() {
      qa(".s2s-heat").forEach(function (p) {
        p.hidden = !(p.getAttribute("data-mode") === st.mode &&
                     +p.getAttribute("data-layer") === st.layer);
      });
      qa(".s2s-traj").forEach(function (p) {
        p.hidden = +p.getAttribute("data-layer") !== st.layer;
      });
      press(q("[data-group=\"mode\"]"), st.mode);
      press(q("[data-group=\"layer\"]"), st.layer);
      var t = st.t, mode = t <= S ? "enc" : "dec", col = t <= S ? t - 1 : t - S - 1;
      qa(".s2s-traj [data-t]").forEach(function (el) {
        var k = +el.getAttribute("data-t");
        el.style.display = k <= t ? "" : "none";
        el.classList.toggle("now", k === t && t < S + T);
      });
      qa(".s2s-heat").forEach(function (p) {
        var cur = q(".cur", p), on = p.getAttribute("data-mode") === mode && t < S + T;
        cur.style.display = on ? "" : "none";
        if (on) cur.setAttribute("x", +p.getAttribute("data-x0") + col * +p.getAttribute("data-cw"));
      });
      q("[data-slider=\"t\"]").value = t;
      q(".s2s-tval").textContent = t + " / " + (S + T);
      say(t < S + T ? "Step " + t + ": " + who(t) + "." :
        "All " + (S + T) + " steps: " + S + " read by the encoder, " + T +
        " written by the decoder. Move the slider to replay them; hover a token or a cell, or " +
        "focus a token (Tab).");
    }
    function hover(panel, col, row) {
      var hl = q(".hl", panel), cw = +panel.getAttribute("data-cw");
      qa(".tok", panel).forEach(function (el) {
        el.classList.toggle("on", +el.getAttribute("data-col") === col);
      });
      if (col === null) {
        hl.style.display = "none";
        qa(".s2s-traj .hov").forEach(function (e) { e.classList.remove("hov"); });
        return;
      }
      hl.style.display = "";
      hl.setAttribute("x", +panel.getAttribute("data-x0") + col * cw);
      var t = panel.getAttribute("data-mode") === "enc" ? col + 1 : S + col + 1;
      qa(".s2s-traj [data-t]").forEach(function (e) {
        e.classList.toggle("hov", +e.getAttribute("data-t") === t);
      });
      var d = data.panels[panel.getAttribute("data-key")], text = "Step " + t + ": " + who(t);
      if (row !== null && row >= 0 && row < d.units.length) {
        var v = values(d)[col * d.units.length + row];
        text += " · unit " + d.units[row] + " = " + (v >= 0 ? "+" : "−") + Math.abs(v).toFixed(2);
      }
      say(text);
    }
    qa(".s2s-heat").forEach(function (panel) {
      var svg = q("svg", panel), img = q("image", panel);
      var n = panel.getAttribute("data-mode") === "enc" ? S : T;
      qa(".tok", panel).forEach(function (el) {
        function enter() { hover(panel, +el.getAttribute("data-col"), null); }
        function leave() { hover(panel, null, null); render(); }
        el.addEventListener("mouseenter", enter);
        el.addEventListener("mouseleave", leave);
        el.addEventListener("focus", enter);
        el.addEventListener("blur", leave);
      });
      img.addEventListener("mousemove", function (ev) {
        var p = svg.createSVGPoint();
        p.x = ev.clientX;
        p.y = ev.clientY;
        p = p.matrixTransform(svg.getScreenCTM().inverse());
        var col = Math.floor((p.x - +panel.getAttribute("data-x0")) / +panel.getAttribute("data-cw"));
        var row = Math.floor((p.y - +panel.getAttribute("data-y0")) / +panel.getAttribute("data-ch"));
        if (col >= 0 && col < n) hover(panel, col, row);
      });
      img.addEventListener("mouseleave", function () { hover(panel, null, null); render(); });
    });
    qa("[data-group=\"mode\"] button").forEach(function (b) {
      b.addEventListener("click", function () {
        st.mode = b.getAttribute("data-value");
        if (st.t < S + T && (st.t <= S) !== (st.mode === "enc")) st.t = S + T;
        render();
      });
    });
    qa("[data-group=\"layer\"] button").forEach(function (b) {
      b.addEventListener("click", function () { st.layer = +b.getAttribute("data-value"); render(); });
    });
    q("[data-slider=\"t\"]").addEventListener("input", function (ev) {
      st.t = +ev.target.value;
      if (st.t < S + T) st.mode = st.t <= S ? "enc" : "dec";
      render();
    });
    render();
  };
}());

/* The hidden-state explorer (hidden.py): encoder/decoder and layer buttons, the time-step
 * slider that replays the trajectory, and the readout of a hovered token or heatmap cell.
 *
 * data: {S, T, mode: "enc" | "dec", layer (1-based), source, output,
 *        panels: {<mode><layer>: {units, vals (int8 * 127, column-major, base64), labels}}}
 */
/* global S2S */
"use strict";

S2S.views.hidden = function (root, data, kit) {
  var q = kit.q, qa = kit.qa, esc = kit.esc, press = kit.press;
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
      " written by the decoder. Move the slider to replay them; hover a token or a cell.");
  }
  function value(d, col, row) {  // int8 values, column-major, base64
    if (!d.bytes) d.bytes = atob(d.vals);
    var b = d.bytes.charCodeAt(col * d.units.length + row);
    return (b > 127 ? b - 256 : b) / 127;
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
      var v = value(d, col, row);
      text += " · unit " + d.units[row] + " = " + (v >= 0 ? "+" : "−") + Math.abs(v).toFixed(2);
    }
    say(text);
  }
  qa(".s2s-heat").forEach(function (panel) {
    var svg = q("svg", panel), img = q("image", panel);
    qa(".tok", panel).forEach(function (el) {
      el.addEventListener("mouseenter", function () {
        hover(panel, +el.getAttribute("data-col"), null);
      });
      el.addEventListener("mouseleave", function () { hover(panel, null, null); render(); });
    });
    img.addEventListener("mousemove", function (ev) {
      var p = svg.createSVGPoint();
      p.x = ev.clientX;
      p.y = ev.clientY;
      p = p.matrixTransform(svg.getScreenCTM().inverse());
      var col = Math.floor((p.x - +panel.getAttribute("data-x0")) / +panel.getAttribute("data-cw"));
      var row = Math.floor((p.y - +panel.getAttribute("data-y0")) / +panel.getAttribute("data-ch"));
      var n = data.panels[panel.getAttribute("data-key")].labels.length;
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

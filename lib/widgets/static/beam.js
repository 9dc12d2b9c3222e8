/* The beam explorer (beam.py): the step slider replays the search column by column, a
 * checkbox hides the pruned hypotheses, and the scores switch between log P and log P / L^α.
 *
 * data: {steps (the last step), dx (column spacing), ml (left margin), bw (box width),
 *        captions: [HTML sentence per step]}
 */
/* global S2S */
"use strict";

S2S.views.beam = function (root, data, kit) {
  var q = kit.q, qa = kit.qa, press = kit.press;
  var tree = q(".s2s-tree"), last = data.steps, scroll = q(".s2s-scroll");
  var sl = q("[data-slider=\"step\"]"), out = q(".s2s-beamout"), mode = "raw";
  var MARGIN = 24;  // pixels kept beside the current column when it is scrolled into view
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
    out.innerHTML = data.captions[t];
    if (keepScroll) return;
    var left = data.ml + t * data.dx, right = left + data.bw;  // keep column t in view
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

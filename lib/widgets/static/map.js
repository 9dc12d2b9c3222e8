/* The map of context vectors (hidden.py, map_panel): hovering a dot names its sentence and
 * rings its nearest neighbours in the full space (data-nn: their indices).
 *
 * data: {map: [sentence, ...]}
 */
/* global S2S */
"use strict";

S2S.views.map = function (root, data, kit) {
  var q = kit.q, qa = kit.qa, esc = kit.esc;
  var map = q(".s2s-map");
  if (!map) return;
  var dots = qa(".mp", map), mapout = q(".s2s-mapout", map);
  dots.forEach(function (d) {
    d.addEventListener("mouseenter", function () {
      var nn = d.getAttribute("data-nn").split(" ").map(Number);
      dots.forEach(function (e, i) { e.classList.toggle("nn", nn.indexOf(i) >= 0); });
      d.classList.add("hov");
      mapout.innerHTML = "<b>" + esc(data.map[+d.getAttribute("data-i")]) + "</b> · nearest: " +
        nn.map(function (i) { return "«" + esc(data.map[i]) + "»"; }).join(", ");
    });
    d.addEventListener("mouseleave", function () {
      dots.forEach(function (e) { e.classList.remove("nn", "hov"); });
      mapout.textContent = "";
    });
  });
};

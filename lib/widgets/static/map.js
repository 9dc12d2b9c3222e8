/* The map of context vectors: S2S.draw.map draws many sentences' contexts as a scatter plot on
 * their two principal components, coloured by group, with the marked sentences ringed;
 * S2S.views.map names a hovered dot's sentence and rings its nearest neighbours in the full
 * space. The hidden-state explorer shows it under its own panels, placing its sentence on it.
 *
 * data (map_view.py's map_data, for ContextMapView or inside HiddenView's data):
 *   {map: null | {sentences, xy: [[PC1, PC2] per sentence], explained: [PC1's share, PC2's],
 *                 groups: [legend names, in order] (empty: one colour, no legend),
 *                 group: [index into groups per sentence], nn: [[neighbour indices] per sentence],
 *                 layer (whose final state), marks: [{label, xy}] (sentences placed on it),
 *                 standalone (the view is the map alone: it has its own title line)}}
 */
/* global S2S */
(function () {
  "use strict";

  var HEIGHT = 320, PAD = 14;  // the plot's height and the padding inside its axes
  var LEGEND_WIDTH = 110, LEGEND_ROW = 18;  // the legend of colour groups, at the plot's right
  var LEGEND_CHARS = 13;  // a group name's characters that fit the legend
  var MARK_CHARS = 28;  // a marked sentence's characters beside its ring
  var OTHER = "#9ca3af";  // the group "other" (sentences outside the common groups)

  var esc = S2S.esc, short = S2S.short;

  function colours(groups) {
    return groups.map(function (g, i) {
      return g === "other" ? OTHER : S2S.CATEGORICAL[i % S2S.CATEGORICAL.length];
    });
  }

  function scatter(map) {
    var W = S2S.WIDTH, ml = S2S.AXIS_LEFT, right = W - LEGEND_WIDTH;
    var marks = map.marks.map(function (m) { return m.xy; });
    var xy = S2S.fit(map.xy.concat(marks), ml + PAD, PAD, right - ml - 2 * PAD,
      HEIGHT - S2S.AXIS_BOTTOM - 2 * PAD);
    var tint = colours(map.groups), first = tint[0] || S2S.CATEGORICAL[0];
    var parts = ["<svg class=\"s2s-fig\" viewBox=\"0 0 " + W + " " + HEIGHT + "\" width=\"" + W +
      "\" role=\"img\" aria-label=\"map of context vectors\">", S2S.axes(HEIGHT, right,
      map.explained)];
    map.sentences.forEach(function (s, i) {
      parts.push("<circle class=\"mp\" data-i=\"" + i + "\" cx=\"" + xy[i][0].toFixed(1) +
        "\" cy=\"" + xy[i][1].toFixed(1) + "\" r=\"3.6\" fill=\"" +
        (map.groups.length ? tint[map.group[i]] : first) + "\"><title>" + esc(s) +
        "</title></circle>");
    });
    map.marks.forEach(function (m, j) {
      var p = xy[map.sentences.length + j], x = p[0].toFixed(1), y = p[1].toFixed(1);
      parts.push("<circle class=\"you\" cx=\"" + x + "\" cy=\"" + y + "\" r=\"7\"/><circle cx=\"" +
        x + "\" cy=\"" + y + "\" r=\"2.5\" fill=\"var(--fg)\"/><text class=\"youl\" x=\"" +
        (p[0] + 10).toFixed(1) + "\" y=\"" + (p[1] + 4).toFixed(1) + "\">" +
        esc(short(m.label, MARK_CHARS)) + "</text>");
    });
    map.groups.forEach(function (g, i) {
      var y = 14 + i * LEGEND_ROW;
      parts.push("<circle cx=\"" + (right + 10) + "\" cy=\"" + (y - 4) + "\" r=\"4.5\" fill=\"" +
        tint[i] + "\"/><text x=\"" + (right + 20) + "\" y=\"" + y + "\" style=\"font-size:12px\">" +
        esc(short(g, LEGEND_CHARS)) + "</text>");
    });
    return parts.join("") + "</svg>";
  }

  S2S.draw.map = function (data) {
    var map = data.map;
    if (!map) return "";
    var k = map.nn.length ? map.nn[0].length : 0;
    var neighbours = k === 1 ? "its nearest neighbour" : "its " + k + " nearest neighbours";
    return (map.standalone ? S2S.header("Context vectors") : "") +
      "<div class=\"s2s-panel s2s-map\"><h4>Where " + map.sentences.length + " sentences land" +
      "</h4><p class=\"s2s-sub\">Each dot is one sentence's context (the final state of layer " +
      map.layer + "), on the two directions along which the contexts vary most. Hover a dot to " +
      "read its sentence and ring " + neighbours + " in the full space.</p>" + scatter(map) +
      "<div class=\"s2s-readout s2s-mapout\"></div></div>";
  };

  S2S.views.map = function (root, data, kit) {
    var q = kit.q, qa = kit.qa, map = q(".s2s-map");
    if (!map) return;
    var dots = qa(".mp", map), mapout = q(".s2s-mapout", map), sentences = data.map.sentences;
    dots.forEach(function (d) {
      d.addEventListener("mouseenter", function () {
        var i = +d.getAttribute("data-i"), nn = data.map.nn[i];
        dots.forEach(function (e, j) { e.classList.toggle("nn", nn.indexOf(j) >= 0); });
        d.classList.add("hov");
        mapout.innerHTML = "<b>" + esc(sentences[i]) + "</b> · nearest: " +
          nn.map(function (j) { return "«" + esc(sentences[j]) + "»"; }).join(", ");
      });
      d.addEventListener("mouseleave", function () {
        dots.forEach(function (e) { e.classList.remove("nn", "hov"); });
        mapout.textContent = "";
      });
    });
  };
}());

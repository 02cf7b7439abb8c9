// reme memory viewer: the link graph on a canvas, laid out by a small force simulation (written for this
// viewer: no library, nothing fetched). Repulsion is computed between nodes in neighbouring grid cells
// only, so a step costs O(nodes + links): 2,000 nodes are drawn at once and settle within a second or two
// while the page already pans, zooms and opens notes.
"use strict";
(function () {
  var canvas = document.getElementById("graph");
  if (!canvas) return;
  var ctx2d = canvas.getContext("2d");
  var info = document.getElementById("graph-info");
  var tip = document.getElementById("graph-tip");
  var form = document.getElementById("graph-filters");
  var COLORS = { personal: "#d97706", procedure: "#059669", wiki: "#2f6fdb", daily: "#98a2b3" };
  var CELL = 60, LINK = 40, REPEL = 900;
  var g = null, x, y, vx, vy, deg, src, dst, alpha = 0, raf = 0;
  var view = { k: 1, tx: 0, ty: 0, userMoved: false };
  var hover = -1, drag = null;

  function query() {
    var p = new URLSearchParams();
    var layers = [];
    form.querySelectorAll("input[name=layer]").forEach(function (b) { if (b.checked) layers.push(b.value); });
    p.set("layers", layers.join(","));
    ["project", "start", "end"].forEach(function (n) { var v = form.elements[n].value; if (v) p.set(n, v); });
    return p;
  }

  function load() {
    canvas.dataset.state = "loading";
    var p = query();
    fetch("/graph.json?" + p.toString(), { credentials: "same-origin" })
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
      .then(start)
      .catch(function (err) { info.textContent = "could not load the graph: " + err.message; canvas.dataset.state = "error"; });
  }

  function start(data) {
    g = data;
    var n = g.nodes.length;
    x = new Float32Array(n); y = new Float32Array(n); vx = new Float32Array(n); vy = new Float32Array(n);
    deg = new Uint16Array(n);
    src = new Int32Array(g.links.length); dst = new Int32Array(g.links.length);
    g.links.forEach(function (l, i) { src[i] = l[0]; dst[i] = l[1]; deg[l[0]]++; deg[l[1]]++; });
    for (var i = 0; i < n; i++) { // a sunflower spiral: spread out from the first frame
      var r = 12 * Math.sqrt(i + 0.5), a = i * 2.399963;
      x[i] = r * Math.cos(a); y[i] = r * Math.sin(a);
    }
    alpha = 1; hover = -1;
    info.textContent = n ? n + " nodes, " + g.links.length + " links" + (g.cut ? " (first " + n + " shown: narrow the filters)" : "")
      : "no notes match these filters";
    canvas.dataset.nodes = String(n);
    canvas.dataset.links = String(g.links.length);
    resize();
    cancelAnimationFrame(raf);
    frame();
  }

  function step() {
    var n = x.length, i, j, c;
    if (!n) { alpha = 0; return; }
    // grid buckets (counting sort), then repulsion between nodes of neighbouring cells
    var minx = Infinity, miny = Infinity, maxx = -Infinity, maxy = -Infinity;
    for (i = 0; i < n; i++) { if (x[i] < minx) minx = x[i]; if (x[i] > maxx) maxx = x[i]; if (y[i] < miny) miny = y[i]; if (y[i] > maxy) maxy = y[i]; }
    var cols = Math.min(512, Math.floor((maxx - minx) / CELL) + 1), rows = Math.min(512, Math.floor((maxy - miny) / CELL) + 1);
    var cellOf = new Int32Array(n), count = new Int32Array(cols * rows + 1), order = new Int32Array(n);
    for (i = 0; i < n; i++) {
      var cx = Math.min(cols - 1, Math.floor((x[i] - minx) / CELL)), cy = Math.min(rows - 1, Math.floor((y[i] - miny) / CELL));
      cellOf[i] = cy * cols + cx; count[cellOf[i] + 1]++;
    }
    for (c = 0; c < cols * rows; c++) count[c + 1] += count[c];
    var fill = count.slice(0, cols * rows);
    for (i = 0; i < n; i++) order[fill[cellOf[i]]++] = i;
    for (i = 0; i < n; i++) {
      var ccx = cellOf[i] % cols, ccy = (cellOf[i] - ccx) / cols;
      for (var dy = -1; dy <= 1; dy++) {
        var ry = ccy + dy; if (ry < 0 || ry >= rows) continue;
        for (var dx = -1; dx <= 1; dx++) {
          var rx = ccx + dx; if (rx < 0 || rx >= cols) continue;
          var cell = ry * cols + rx;
          for (var p = count[cell]; p < count[cell + 1]; p++) {
            j = order[p]; if (j <= i) continue;
            var ddx = x[i] - x[j], ddy = y[i] - y[j], d2 = ddx * ddx + ddy * ddy + 0.01;
            if (d2 > CELL * CELL * 2) continue;
            var f = (REPEL * alpha) / d2;
            vx[i] += ddx * f; vy[i] += ddy * f; vx[j] -= ddx * f; vy[j] -= ddy * f;
          }
        }
      }
    }
    for (var e = 0; e < src.length; e++) { // springs
      var a = src[e], b = dst[e], lx = x[b] - x[a], ly = y[b] - y[a], d = Math.sqrt(lx * lx + ly * ly) + 0.01;
      var s = ((d - LINK) / d) * 0.06 * alpha;
      vx[a] += lx * s; vy[a] += ly * s; vx[b] -= lx * s; vy[b] -= ly * s;
    }
    for (i = 0; i < n; i++) { // gravity to the centre, damping
      vx[i] -= x[i] * 0.004 * alpha; vy[i] -= y[i] * 0.004 * alpha;
      vx[i] *= 0.55; vy[i] *= 0.55;
      x[i] += Math.max(-30, Math.min(30, vx[i])); y[i] += Math.max(-30, Math.min(30, vy[i]));
    }
    alpha *= 0.97; // ~130 steps: settled in a second or two at 2,000 nodes
  }

  function frame() {
    var t = performance.now();
    while (alpha > 0.02 && performance.now() - t < 14) step();
    if (!drag) fit(); // follows the layout until the user pans or zooms
    draw();
    if (canvas.dataset.state !== "ready") {
      canvas.dataset.state = "ready";
      canvas.dataset.readyMs = String(Math.round(performance.now()));
    }
    if (alpha > 0.02) raf = requestAnimationFrame(frame);
    else canvas.dataset.settled = "1";
  }

  function fit() {
    if (view.userMoved || !x.length) return;
    var minx = Infinity, miny = Infinity, maxx = -Infinity, maxy = -Infinity;
    for (var i = 0; i < x.length; i++) { minx = Math.min(minx, x[i]); maxx = Math.max(maxx, x[i]); miny = Math.min(miny, y[i]); maxy = Math.max(maxy, y[i]); }
    var w = canvas.width, h = canvas.height, pad = 30 * dpr();
    view.k = Math.min((w - 2 * pad) / Math.max(1, maxx - minx), (h - 2 * pad) / Math.max(1, maxy - miny), 4 * dpr());
    view.tx = w / 2 - view.k * (minx + maxx) / 2; view.ty = h / 2 - view.k * (miny + maxy) / 2;
  }

  function dpr() { return window.devicePixelRatio || 1; }

  function resize() {
    canvas.width = Math.max(1, canvas.clientWidth * dpr()); canvas.height = Math.max(1, canvas.clientHeight * dpr());
  }

  function draw() {
    var w = canvas.width, h = canvas.height, k = view.k, tx = view.tx, ty = view.ty, i;
    ctx2d.setTransform(1, 0, 0, 1, 0, 0);
    ctx2d.clearRect(0, 0, w, h);
    ctx2d.lineWidth = 1 * dpr();
    ctx2d.strokeStyle = "rgba(100,112,133,0.22)";
    ctx2d.beginPath();
    for (var e = 0; e < src.length; e++) {
      ctx2d.moveTo(x[src[e]] * k + tx, y[src[e]] * k + ty); ctx2d.lineTo(x[dst[e]] * k + tx, y[dst[e]] * k + ty);
    }
    ctx2d.stroke();
    var drawn = 0, byLayer = {};
    for (i = 0; i < x.length; i++) (byLayer[g.nodes[i].layer] = byLayer[g.nodes[i].layer] || []).push(i);
    Object.keys(byLayer).forEach(function (layer) {
      ctx2d.fillStyle = COLORS[layer] || "#667085";
      ctx2d.beginPath();
      byLayer[layer].forEach(function (i) {
        var px = x[i] * k + tx, py = y[i] * k + ty, r = radius(i);
        if (px < -r || py < -r || px > w + r || py > h + r) return;
        ctx2d.moveTo(px + r, py); ctx2d.arc(px, py, r, 0, 6.2832); drawn++;
      });
      ctx2d.fill();
    });
    if (k > 1.2 * dpr() || x.length <= 120) labels(w, h); // names when they can be read
    if (hover >= 0) { ctx2d.strokeStyle = "#1d2330"; ctx2d.lineWidth = 2 * dpr(); ctx2d.beginPath(); ctx2d.arc(x[hover] * k + tx, y[hover] * k + ty, radius(hover) + 3, 0, 6.2832); ctx2d.stroke(); }
    canvas.dataset.drawn = String(drawn);
  }

  function radius(i) { return (2.5 + Math.min(6, Math.sqrt(deg[i]))) * dpr(); }

  function labels(w, h) {
    ctx2d.fillStyle = "#344054"; ctx2d.font = 11 * dpr() + "px system-ui, sans-serif";
    var shown = 0;
    for (var i = 0; i < x.length && shown < 250; i++) {
      var px = x[i] * view.k + view.tx, py = y[i] * view.k + view.ty;
      if (px < 0 || py < 0 || px > w || py > h) continue;
      ctx2d.fillText(g.nodes[i].name.slice(0, 40), px + radius(i) + 2, py + 4); shown++;
    }
  }

  function nodeAt(ev) {
    var rect = canvas.getBoundingClientRect(), px = (ev.clientX - rect.left) * dpr(), py = (ev.clientY - rect.top) * dpr();
    var best = -1, bestD = 12 * 12 * dpr() * dpr();
    for (var i = 0; i < x.length; i++) {
      var dx = x[i] * view.k + view.tx - px, dy = y[i] * view.k + view.ty - py, d = dx * dx + dy * dy;
      if (d < bestD) { bestD = d; best = i; }
    }
    return best;
  }

  canvas.addEventListener("mousedown", function (ev) { drag = { x: ev.clientX, y: ev.clientY, moved: false }; canvas.style.cursor = "grabbing"; });
  window.addEventListener("mouseup", function (ev) {
    if (drag && !drag.moved && g) { var i = nodeAt(ev); if (i >= 0) window.location.href = "/note?path=" + encodeURIComponent(g.nodes[i].path); }
    drag = null; canvas.style.cursor = "grab";
  });
  canvas.addEventListener("mousemove", function (ev) {
    if (!g) return;
    if (drag) {
      var ddx = ev.clientX - drag.x, ddy = ev.clientY - drag.y;
      if (Math.abs(ddx) + Math.abs(ddy) > 3) drag.moved = true;
      view.tx += ddx * dpr(); view.ty += ddy * dpr(); drag.x = ev.clientX; drag.y = ev.clientY; view.userMoved = true;
      draw(); return;
    }
    var i = nodeAt(ev);
    if (i !== hover) { hover = i; draw(); }
    if (i >= 0) {
      var rect = canvas.getBoundingClientRect();
      tip.hidden = false; tip.textContent = g.nodes[i].name + " — " + g.nodes[i].path;
      tip.style.left = (ev.clientX - rect.left + 12) + "px"; tip.style.top = (ev.clientY - rect.top + 12) + "px";
    } else tip.hidden = true;
  });
  canvas.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var rect = canvas.getBoundingClientRect(), px = (ev.clientX - rect.left) * dpr(), py = (ev.clientY - rect.top) * dpr();
    var f = Math.exp(-ev.deltaY * 0.0015);
    view.tx = px - (px - view.tx) * f; view.ty = py - (py - view.ty) * f; view.k *= f; view.userMoved = true;
    draw();
  }, { passive: false });
  window.addEventListener("resize", function () { if (g) { resize(); draw(); } });
  // where a note's node is on the screen (client coordinates), for tests and for the curious
  window.remeGraph = {
    at: function (path) {
      var i = g ? g.nodes.findIndex(function (n) { return n.path === path; }) : -1;
      if (i < 0) return null;
      var rect = canvas.getBoundingClientRect();
      return [rect.left + (x[i] * view.k + view.tx) / dpr(), rect.top + (y[i] * view.k + view.ty) / dpr()];
    }
  };
  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    view.userMoved = false;
    history.replaceState(null, "", "/graph?" + query().toString());
    load();
  });
  load();
})();

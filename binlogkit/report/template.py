"""The report's one Jinja2 template (autoescaped: file names and details from binlogs are text,
never markup). Everything is inline — styles, SVG, a few lines of script — so the file opens
offline, from a mail attachment or a ticket."""

TEMPLATE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="binlogkit">
<title>{{ title }}</title>
<style>
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 20px 28px; color: #222; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 26px 0 4px; } h3 { font-size: 14px; margin: 14px 0 4px; }
.muted { color: #666; } .err { color: #b3261e; font-weight: 600; } .warn { color: #b86e00; font-weight: 600; }
.ok { color: #1b7f3b; font-weight: 600; }
svg { display: block; overflow: visible; }
.bar0 { fill: #8fb3d9; } .bar1 { fill: #5e8fc2; } .bar:hover { fill: #274f7a; }
.holey { stroke: #b3261e; stroke-width: 2; }
.gap { fill: url(#hatch); stroke: #b3261e; stroke-width: 1; }
.mark { cursor: pointer; } .mark.error { fill: #b3261e; } .mark.warning { fill: #e08a00; } .mark.info { fill: #2a6fb0; }
.mark:hover, .mark.sel { stroke: #000; stroke-width: 1.5; }
.lane { fill: #555; font-size: 10px; } .lanebg { fill: #f4f4f4; }
.tick { stroke: #ccc; } .ticklabel { fill: #555; font-size: 10px; }
.cov { fill: #3c9a5f; } .covbg { fill: #eee; } .hole { fill: #b3261e; }
table { border-collapse: collapse; margin-top: 6px; } th, td { padding: 3px 8px; border-bottom: 1px solid #e4e4e4; text-align: left; vertical-align: top; }
th { background: #f6f6f6; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.sel td { background: #fff3c4; }
#detail { position: sticky; top: 0; background: #fffbe6; border: 1px solid #e6d38a; padding: 6px 10px; margin: 8px 0; display: none; z-index: 2; }
.legend span { display: inline-block; margin-right: 14px; }
.sw { display: inline-block; width: 12px; height: 10px; vertical-align: -1px; margin-right: 4px; }
</style>
</head>
<body>
<h1>{{ title }}</h1>
<div class="muted">{{ files }} files, {{ "{:,}".format(bytes) }} bytes &middot;
  {% if counts.error %}<span class="err">{{ counts.error }} errors</span>{% else %}<span class="ok">0 errors</span>{% endif %},
  {% if counts.warning %}<span class="warn">{{ counts.warning }} warnings</span>{% else %}0 warnings{% endif %}
  &middot; x axis: {% if axis.by_time %}event time (UTC){% else %}file order (the events carry no usable times){% endif %}</div>
<p class="legend">
  <span><i class="sw" style="background:#8fb3d9"></i>a file (bar: its first to last event)</span>
  <span><i class="sw" style="background:#f3c9c5;border:1px solid #b3261e"></i>missing files</span>
  <span><i class="sw" style="background:#b3261e"></i>error</span>
  <span><i class="sw" style="background:#e08a00"></i>warning</span>
  <span class="muted">hover a mark for its details, click it to find it in the table</span>
</p>
<div id="detail"></div>
<svg width="0" height="0" aria-hidden="true"><defs>
  <pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
    <rect width="6" height="6" fill="#f3c9c5"></rect><line x1="0" y1="0" x2="0" y2="6" stroke="#b3261e" stroke-width="2"></line>
  </pattern></defs></svg>

<h2>Timeline</h2>
{% for s in series %}
<section class="series" data-series="{{ s.name }}">
<h3>{{ s.name }} <span class="muted">{{ "relay logs" if s.relay else "binlogs" }} &middot; {{ s.files }} files &middot;
  {{ s.first }} .. {{ s.last }} UTC</span>
  {% if s.counts.error %}<span class="err">{{ s.counts.error }} errors</span> {% endif %}
  {% if s.counts.warning %}<span class="warn">{{ s.counts.warning }} warnings</span>{% endif %}
  {% if s.binned %}<span class="muted">(files drawn in bins: hover a bar for the files in it)</span>{% endif %}</h3>
{% for f in s.wide %}<div class="mark-wide {{ f.severity }}" data-kind="{{ f.kind }}" data-severity="{{ f.severity }}"><span class="{{ 'err' if f.severity == 'error' else 'warn' }}">{{ kinds.get(f.kind, f.kind) }}</span>: {{ f.detail }}</div>{% endfor %}
<svg class="timeline" width="{{ width + left + 150 }}" height="{{ s.height }}" role="img" aria-label="timeline of {{ s.name }}">
  {% for l in s.lanes %}<rect class="lanebg" x="{{ left }}" y="{{ l.y }}" width="{{ width }}" height="{{ lane - 2 }}"></rect>
  <text class="lane" x="{{ width + left + 6 }}" y="{{ l.y + lane - 3 }}">{{ l.label }}</text>{% endfor %}
  {% for t in axis.ticks %}<line class="tick" x1="{{ t.x }}" x2="{{ t.x }}" y1="0" y2="{{ s.bar_y + 18 }}"></line>
  <text class="ticklabel" x="{{ t.x }}" y="{{ s.bar_y + 30 }}" text-anchor="{{ 'start' if loop.first else ('end' if loop.last else 'middle') }}">{{ t.label }}</text>{% endfor %}
  {% for b in s.bars %}<rect class="bar bar{{ b.shade }}{{ ' holey' if b.inside }}" data-files="{{ b.n }}" data-first="{{ b.first }}" data-missing-inside="{{ b.inside }}" x="{{ b.x }}" y="{{ s.bar_y }}" width="{{ b.w }}" height="16"><title>{{ b.title }}</title></rect>{% endfor %}
  {% for g in s.gaps %}<rect class="gap mark" data-kind="missing_file" data-severity="error" data-missing="{{ g.names|join(' ') }}" x="{{ g.x }}" y="2" width="{{ g.w }}" height="{{ s.bar_y + 16 }}"><title>{{ g.title }}</title></rect>{% endfor %}
  {% for m in s.marks %}{% set y = 4 + m.lane * lane %}<path class="mark {{ m.severity }}" data-kind="{{ m.kind }}" data-severity="{{ m.severity }}" data-file="{{ m.file }}" data-offset="{{ m.offset if m.offset is not none else '' }}" data-count="{{ m.count }}" data-row="{{ m.row or '' }}" d="M{{ m.x }} {{ y }} l4.5 {{ lane - 2 }} h-9 z"><title>{{ m.title }}</title></path>{% endfor %}
</svg>
</section>
{% endfor %}

<h2>GTID coverage</h2>
<p class="muted">Per series and GTID stream (MariaDB domain-server, MySQL uuid[:tag]): green where the archive holds the GTIDs, red where numbers are missing between the lowest and highest it holds.</p>
<table>
<tr><th>series</th><th>stream</th><th class="num">GTIDs</th><th>range</th><th>coverage</th><th>missing</th></tr>
{% for s in series %}{% for c in s.coverage %}
<tr class="coverage" data-series="{{ s.name }}" data-key="{{ c.key }}" data-holes="{{ c.holes }}">
<td>{{ s.name }}</td><td>{{ c.key }}</td><td class="num">{{ "{:,}".format(c.count) }}</td><td>{{ c.lo }} .. {{ c.hi }}</td>
<td><svg width="{{ width // 2 + 20 }}" height="14" viewBox="0 0 {{ width + left * 2 }} 14" preserveAspectRatio="none">
<rect class="covbg" x="{{ left }}" y="2" width="{{ width }}" height="10"></rect>
{% for g in c.segs %}<rect class="cov" x="{{ g.x }}" y="2" width="{{ g.w }}" height="10"></rect>{% endfor %}
{% for h in c.hole_px %}<rect class="hole" x="{{ h.x }}" y="0" width="{{ h.w }}" height="14"><title>{{ h.title }}</title></rect>{% endfor %}
</svg></td>
<td>{% if c.holes %}<span class="err">{{ c.holes }}</span> {{ c.hole_text }}{% else %}none{% endif %}</td></tr>
{% endfor %}{% endfor %}
</table>

<h2>Series</h2>
<table>
<tr><th>series</th><th class="num">files</th><th class="num">bytes</th><th class="num">events</th><th>first event</th><th>last event</th><th>GTIDs covered</th></tr>
{% for s in series %}<tr><td>{{ s.name }}</td><td class="num">{{ s.files }}</td><td class="num">{{ "{:,}".format(s.bytes) }}</td>
<td class="num">{{ "{:,}".format(s.events) }}</td><td>{{ s.first }}</td><td>{{ s.last }}</td><td>{{ s.covered }}</td></tr>{% endfor %}
</table>

<h2>Findings</h2>
{% if findings %}
<table id="findings">
<tr><th>severity</th><th>kind</th><th>where</th><th>detail</th></tr>
{% for f in findings %}<tr id="{{ f.row }}" class="finding" data-kind="{{ f.kind }}" data-severity="{{ f.severity }}">
<td class="{{ 'err' if f.severity == 'error' else 'warn' }}">{{ f.severity }}</td><td>{{ kinds.get(f.kind, f.kind) }}</td>
<td>{{ f.place }}</td><td>{{ f.detail }}</td></tr>{% endfor %}
</table>
{% if findings_total > findings|length or findings_omitted %}<p class="muted">{{ findings_total - findings|length + findings_omitted }} more findings are in the JSON / Parquet output.</p>{% endif %}
{% else %}<p class="ok">No findings.</p>{% endif %}
<script>
(function () {
  var detail = document.getElementById("detail");
  document.querySelectorAll(".mark").forEach(function (m) {
    m.addEventListener("click", function () {
      document.querySelectorAll(".sel").forEach(function (e) { e.classList.remove("sel"); });
      m.classList.add("sel");
      var t = m.querySelector("title");
      detail.textContent = t ? t.textContent : "";
      detail.style.display = "block";
      var row = m.getAttribute("data-row") && document.getElementById(m.getAttribute("data-row"));
      if (row) { row.classList.add("sel"); row.scrollIntoView({block: "center"}); }
    });
  });
})();
</script>
</body>
</html>
"""

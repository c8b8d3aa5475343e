// Time-series charts of the pages, drawn with uPlot (served by the gateway from its npm package, /assets/uplot.js).
// Without the library the pages still work: each chart says it is not installed and the tables hold the numbers.
import { el } from './dom.js';

const COLORS = ['#2456c6', '#d9480f', '#2b8a3e', '#862e9c', '#c2255c', '#0b7285', '#e67700', '#5c940d', '#495057'];

/** Axis times in UTC, like every time the pages show. */
const utc = (ts) => globalThis.uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC');

const DAY_STEPS = [1, 2, 7, 14, 30].map((d) => d * 86_400);
// Whole-number ticks for counts: a scale of 0..2 is labelled 0, 1, 2, not 0, 0, 1, 1, 2.
const WHOLE_STEPS = Array.from({ length: 16 }, (_, e) => [1, 2, 5].map((m) => m * 10 ** e)).flat();
const fromZero = (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1];

/** Values with no neighbour (a lone error minute): a line through them has no length, so each is drawn as a point. */
function lonePoints(u, si, show) {
  if (show) return null;
  const v = u.data[si];
  const lone = [];
  for (let i = 0; i < v.length; i++) if (v[i] != null && v[i - 1] == null && v[i + 1] == null) lone.push(i);
  return lone.length ? lone : null;
}

// One observer for every chart: a chart follows the width of its box (the window, a phone turned sideways).
const resize = typeof ResizeObserver === 'function'
  ? new ResizeObserver((entries) => {
    for (const e of entries) {
      const plot = e.target.plot;
      const width = Math.floor(e.contentRect.width);
      if (plot && width > 0 && Math.abs(plot.width - width) > 2) plot.setSize({ width, height: plot.height });
    }
  })
  : undefined;

/**
 * Draw a chart into `box` (replacing what it held). `x`: times in ms; `series`: [{ label, values, bars? , scale? }];
 * `format(v)` renders values of the left axis and the legend, `format2` those on scale "right" when a series uses it;
 * `daily`: one point per day (ticks on whole days); `whole`: the left axis counts (whole-number ticks).
 */
export function timeChart(box, { x, series, format = String, format2, daily = false, whole = false, height = 200 }) {
  if (box.plot) { resize?.unobserve(box); box.plot.destroy(); box.plot = undefined; }
  box.replaceChildren();
  if (typeof globalThis.uPlot !== 'function') {
    box.append(el('p', { class: 'note' }, 'Chart library not installed (npm install copies it); the numbers are in the tables.'));
    return undefined;
  }
  const bars = globalThis.uPlot.paths.bars({ size: [0.7, 40] });
  // Bars at the ends need half a bucket of room to be drawn whole.
  const half = series.some((s) => s.bars) && x.length > 1 ? (x[1] - x[0]) / 2000 : 0;
  const opts = {
    width: Math.max(200, Math.floor(box.clientWidth || 600)),
    height,
    tzDate: utc,
    cursor: { drag: { x: false, y: false } },
    // Counts start at 0; a window without traffic still has a scale (0..1) rather than none.
    scales: { x: { time: true, ...(half ? { range: (_u, min, max) => [min - half, max + half] } : {}) }, y: { range: fromZero }, ...(format2 ? { right: { range: fromZero } } : {}) },
    axes: [
      // Daily points: ticks on whole days, labelled MM-DD.
      { stroke: '#5b6475', grid: { stroke: '#eceff4' }, ...(daily ? { incrs: DAY_STEPS, values: (_u, vals) => vals.map((v) => new Date(v * 1e3).toISOString().slice(5, 10)) } : {}) },
      { stroke: '#5b6475', grid: { stroke: '#eceff4' }, size: 64, values: (_u, vals) => vals.map(format), ...(whole ? { incrs: WHOLE_STEPS } : {}) },
      ...(format2 ? [{ scale: 'right', side: 1, stroke: '#5b6475', grid: { show: false }, size: 64, values: (_u, vals) => vals.map(format2) }] : []),
    ],
    series: [
      { value: (_u, ts) => (ts == null ? '—' : new Date(ts * 1e3).toISOString().slice(0, 16).replace('T', ' ')) },
      ...series.map((s, i) => {
        const color = COLORS[i % COLORS.length];
        const fmt = s.scale === 'right' ? format2 : format;
        return {
          label: s.label, stroke: color, width: 2, scale: s.scale ?? 'y', value: (_u, v) => (v == null ? '—' : fmt(v)),
          ...(s.bars ? { paths: bars, fill: `${color}99`, points: { show: false } } : { points: { show: x.length < 40, filter: lonePoints } }),
        };
      }),
    ],
  };
  const plot = new globalThis.uPlot(opts, [x.map((t) => t / 1000), ...series.map((s) => s.values)], box);
  box.plot = plot;
  resize?.observe(box);
  return plot;
}

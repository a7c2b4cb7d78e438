/** A bar of a server-rendered SVG chart, in the chart's own coordinates. */
export interface Bar {
  x: number;
  y: number;
  width: number;
  height: number;
  label: string;
  title: string;
}

export interface BarChart {
  width: number;
  height: number;
  baseline: number;
  bars: Bar[];
  /** Labels under the axis: the first, middle and last day. */
  ticks: Array<{ x: number; label: string; anchor: 'start' | 'middle' | 'end' }>;
  maxLabel: string;
}

const WIDTH = 600;
const HEIGHT = 160;
const BASELINE = 140;
const TOP = 12;

/**
 * The geometry of a bar chart of one value per day (the overview's paid sales of the last 30 days),
 * rendered as inline SVG by the template: no script, no image request, readable without JavaScript.
 */
export function barChart(points: Array<{ label: string; value: number; title: string }>, maxLabel: (max: number) => string): BarChart {
  const max = Math.max(0, ...points.map((point) => point.value));
  const slot = points.length > 0 ? WIDTH / points.length : WIDTH;
  const bars = points.map((point, index) => {
    const height = max > 0 ? Math.round(((BASELINE - TOP) * point.value) / max) : 0;
    return { x: Math.round(index * slot + slot * 0.15), y: BASELINE - height, width: Math.max(1, Math.round(slot * 0.7)), height, label: point.label, title: point.title };
  });
  const tickIndexes = points.length > 0 ? [...new Set([0, Math.floor((points.length - 1) / 2), points.length - 1])] : [];
  return {
    width: WIDTH,
    height: HEIGHT,
    baseline: BASELINE,
    bars,
    ticks: tickIndexes.map((index) => {
      const anchor = index === 0 ? 'start' : index === points.length - 1 ? 'end' : 'middle';
      return { x: anchor === 'start' ? 0 : anchor === 'end' ? WIDTH : Math.round(index * slot + slot / 2), label: points[index].label, anchor };
    }),
    maxLabel: maxLabel(max),
  };
}

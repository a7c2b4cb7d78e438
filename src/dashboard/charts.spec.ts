import { barChart } from './charts';

const points = (values: number[]) => values.map((value, i) => ({ label: `d${i}`, value, title: `t${i}` }));

describe('barChart', () => {
  it('draws the largest value full height and the others in proportion, on one baseline', () => {
    const chart = barChart(points([0, 50, 100]), (max) => `max ${max}`);
    const [empty, half, full] = chart.bars;
    expect(empty.height).toBe(0);
    expect(full.height).toBe(2 * half.height);
    for (const bar of chart.bars) expect(bar.y + bar.height).toBe(chart.baseline);
    expect(full.y).toBeGreaterThanOrEqual(0);
    expect(chart.maxLabel).toBe('max 100');
  });

  it('keeps the bars inside the width, in order, and labels the first, middle and last day', () => {
    const chart = barChart(points(Array.from({ length: 30 }, (_, i) => i)), String);
    expect(chart.bars).toHaveLength(30);
    for (let i = 1; i < 30; i += 1) expect(chart.bars[i].x).toBeGreaterThan(chart.bars[i - 1].x);
    const last = chart.bars[29];
    expect(last.x + last.width).toBeLessThanOrEqual(chart.width);
    expect(chart.ticks.map((tick) => [tick.label, tick.anchor])).toEqual([
      ['d0', 'start'],
      ['d14', 'middle'],
      ['d29', 'end'],
    ]);
  });

  it('draws nothing taller than zero when every day is zero', () => {
    expect(barChart(points([0, 0]), String).bars.map((bar) => bar.height)).toEqual([0, 0]);
  });
});

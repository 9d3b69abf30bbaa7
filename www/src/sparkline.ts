// A tiny canvas sparkline of the last N per-second samples.
export class Sparkline {
  private readonly samples: number[] = [];
  private readonly ctx: CanvasRenderingContext2D | null;

  constructor(private readonly canvas: HTMLCanvasElement, private readonly size: number) {
    this.ctx = canvas.getContext('2d');
  }

  push(v: number): void {
    this.samples.push(v);
    if (this.samples.length > this.size) this.samples.shift();
    this.draw();
  }

  private draw(): void {
    const { ctx, canvas } = this;
    if (!ctx) return;
    const w = canvas.width;
    const h = canvas.height;
    const max = Math.max(1, ...this.samples);
    const step = w / (this.size - 1);
    const x0 = w - (this.samples.length - 1) * step;
    ctx.clearRect(0, 0, w, h);
    ctx.beginPath();
    this.samples.forEach((v, i) => {
      const x = x0 + i * step;
      const y = h - 2 - (v / max) * (h - 4);
      if (i === 0) ctx.moveTo(x, y);
      else ctx.lineTo(x, y);
    });
    ctx.lineTo(w, h);
    ctx.lineTo(x0, h);
    ctx.closePath();
    ctx.fillStyle = 'rgba(127, 179, 255, 0.25)';
    ctx.fill();
    ctx.beginPath();
    this.samples.forEach((v, i) => {
      const x = x0 + i * step;
      const y = h - 2 - (v / max) * (h - 4);
      if (i === 0) ctx.moveTo(x, y);
      else ctx.lineTo(x, y);
    });
    ctx.strokeStyle = '#7fb3ff';
    ctx.lineWidth = 1.5;
    ctx.stroke();
  }
}

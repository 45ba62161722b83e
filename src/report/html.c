/* html.c — the matrix as one self-contained HTML file: no network, inline CSS, JS and
 * SVG. The data is the same JSON as matrix.json, embedded; the page draws a heatmap
 * (one cell per row x column) and, per cell, a drill-down: the counts by invariant and
 * one failing state with its I/O timeline, the cut point and the damaged blocks with
 * the files they belonged to. Opening it with #selftest makes the page check itself
 * (cell count, a drill-down opening) and write the result into #selftest-result. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "blackout/matrix.h"

static const char page_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<title>blackout matrix</title>\n<style>\n"
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;background:#fafafa}\n"
    "h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:20px 0 6px}\n"
    ".sub{color:#666}.verdicts li{margin:4px 0}.tag{font:12px monospace;background:#eee;"
    "padding:1px 4px;border-radius:3px;margin-right:6px}\n"
    "svg text{font:12px system-ui,sans-serif}.cell{cursor:pointer}.cell:hover rect{stroke:#000;"
    "stroke-width:2}\n"
    "#drill{display:none;background:#fff;border:1px solid #ccc;border-radius:6px;padding:12px;"
    "margin-top:12px}\n#drill.open{display:block}table.d{border-collapse:collapse}"
    "table.d td,table.d th{border:1px solid #ddd;padding:2px 8px;text-align:left}\n"
    "code{background:#f0f0f0;padding:1px 3px}.legend span{display:inline-block;width:14px;"
    "height:14px;vertical-align:middle;margin:0 4px 0 12px}\n"
    "</style></head><body>\n"
    "<h1>blackout: the measured expectations table</h1>\n"
    "<div class=\"sub\" id=\"meta\"></div>\n"
    "<h2>What the measurements say</h2><ul class=\"verdicts\" id=\"verdicts\"></ul>\n"
    "<h2>Matrix</h2><div class=\"legend\">crash states that broke an invariant:"
    "<span style=\"background:#3a8f3a\"></span>none"
    "<span style=\"background:#e0a030\"></span>some, all detected"
    "<span style=\"background:#c62828\"></span>some silent"
    "<span style=\"background:#bbb\"></span>not applicable</div>\n"
    "<div id=\"heatmap\"></div>\n<div id=\"drill\"></div>\n"
    "<pre id=\"selftest-result\"></pre>\n"
    "<script type=\"application/json\" id=\"data\">\n";

static const char page_tail[] =
    "</script>\n<script>\n"
    "'use strict';\n"
    "const M=JSON.parse(document.getElementById('data').textContent);\n"
    "const NS='http://www.w3.org/2000/svg';\n"
    "function el(t,a,p){const e=document.createElementNS(NS,t);for(const k in a)"
    "e.setAttribute(k,a[k]);if(p)p.appendChild(e);return e;}\n"
    "function h(t,txt,p){const e=document.createElement(t);if(txt!=null)e.textContent=txt;"
    "if(p)p.appendChild(e);return e;}\n"
    "function cellOf(r,c){return M.cells.find(x=>x.row===r&&x.col===c);}\n"
    "function bad(x){return x.states-x.ok;}\n"
    "function colour(x){if(!x.ran)return '#bbb';if(bad(x)===0)return '#3a8f3a';"
    "if(x.silent>0){const f=Math.min(1,x.silent/x.states*4);"
    "return 'rgb('+Math.round(200+f*20)+','+Math.round(80-f*40)+','+Math.round(60-f*20)+')';}"
    "return '#e0a030';}\n"
    "function label(x){if(!x.ran)return 'n/a';if(bad(x)===0)return 'ok '+x.states+"
    "(x.allowed?' +'+x.allowed+' allowed':'');"
    "return bad(x)+'/'+x.states+(x.silent?' ('+x.silent+' silent)':'');}\n"
    "document.getElementById('meta').textContent=M.mode+' run, seed '+M.seed+', '+"
    "M.seconds.toFixed(0)+' s; workloads: '+M.workloads.join(', ');\n"
    "const vl=document.getElementById('verdicts');\n"
    "for(const v of M.verdicts){const li=h('li',null,vl);h('span',v.expectation,li)."
    "className='tag';li.appendChild(document.createTextNode(v.text));}\n"
    "if(!M.verdicts.length)h('li','no row pair in this run allows a verdict',vl);\n"
    "const CW=150,CH=40,LW=230,TH=60;\n"
    "const svg=el('svg',{width:LW+CW*M.columns.length+10,height:TH+CH*M.rows.length+10,"
    "id:'heatmap-svg'},document.getElementById('heatmap'));\n"
    "M.columns.forEach((c,j)=>{const t=el('text',{x:LW+j*CW+CW/2,y:TH-10,'text-anchor':"
    "'middle'},svg);t.textContent=c.label;});\n"
    "M.rows.forEach((r,i)=>{const t=el('text',{x:LW-8,y:TH+i*CH+CH/2+4,'text-anchor':'end'},"
    "svg);t.textContent=r.label;\n"
    " M.columns.forEach((c,j)=>{const x=cellOf(r.id,c.id);if(!x)return;\n"
    "  const g=el('g',{class:'cell','data-row':r.id,'data-col':c.id},svg);\n"
    "  el('rect',{x:LW+j*CW+1,y:TH+i*CH+1,width:CW-2,height:CH-2,rx:4,fill:colour(x)},g);\n"
    "  const t2=el('text',{x:LW+j*CW+CW/2,y:TH+i*CH+CH/2+4,'text-anchor':'middle',fill:"
    "x.ran?'#fff':'#444'},g);t2.textContent=label(x);\n"
    "  g.addEventListener('click',()=>drill(r,c,x));});});\n"
    "function timeline(e,p){const n=e.ops.length;if(!n)return;const W=900,H=70;\n"
    " const s=el('svg',{width:W+20,height:H+30,id:'timeline'},p);const dx=W/Math.max(n,1);\n"
    " el('line',{x1:10,y1:H/2,x2:W+10,y2:H/2,stroke:'#999'},s);\n"
    " e.ops.forEach((o,k)=>{const x=10+k*dx+dx/2;let c='#1565c0',y1=H/2-12,y2=H/2+12;\n"
    "  if(o.op==='flush'){c='#000';y1=8;y2=H-8;}else if(o.fua){c='#ef6c00';}\n"
    "  else if(o.op==='mark'){c='#6a1b9a';y1=4;y2=H/2;}else if(o.op==='discard'){c='#777';}\n"
    "  const ln=el('line',{x1:x,y1:y1,x2:x,y2:y2,stroke:c,'stroke-width':Math.max(1,"
    "Math.min(4,dx-1))},s);const ti=el('title',{},ln);ti.textContent=k+': '+o.op+"
    "(o.lba!=null?' lba '+o.lba+' x'+o.count:'')+(o.fua?' FUA':'')+(o.mark?' '+o.mark:'');});\n"
    " const cx=10+(e.cut+(e.cut_inflight?0.5:1))*dx;el('line',{x1:cx,y1:0,x2:cx,y2:H,"
    "stroke:'#d50000','stroke-width':3,id:'cutline'},s);\n"
    " const ct=el('text',{x:Math.min(cx+4,W-60),y:H+16,fill:'#d50000'},s);ct.textContent="
    "'power cut '+(e.cut_inflight?'during':'after')+' op '+e.cut;}\n"
    "function drill(r,c,x){const d=document.getElementById('drill');d.innerHTML='';"
    "d.className='open';\n"
    " h('h2',r.label+' \\u00d7 '+c.label,d);const p=h('p',null,d);"
    "p.appendChild(document.createTextNode('stack '));h('code',r.stack,p);"
    "p.appendChild(document.createTextNode(' \\u2014 mkfs '+c.mkfs+', mount '+c.mount+'. '+"
    "(r.tests||'')));\n"
    " if(!x.ran){h('p','Not applicable: '+(x.note||''),d);return;}\n"
    " h('p',x.states+' crash states judged ('+(x.exhaustive?'exhaustive':'sampled, coverage '+"
    "(100*x.coverage).toFixed(1)+'%')+'), '+x.ok+' kept every invariant, '+x.silent+"
    "' broke one silently, '+x.detected+' were detected.',d);\n"
    " const t=h('table',null,d);t.className='d';const hr=h('tr',null,t);"
    "for(const k of M.invariants)h('th',k,hr);const vr=h('tr',null,t);"
    "for(const k of M.invariants)h('td',String(x.violations[k]),vr);\n"
    " const e=x.example;if(!e){h('p','No failing state.',d);return;}\n"
    " h('h2','Example failing state'+(e.silent?' (silent)':' (detected)'),d);\n"
    " h('p','Workload '+e.workload+', state '+e.state+': '+e.broken,d);\n"
    " const rb=h('p','Rebuild: ',d);h('code',e.rebuild,rb);\n"
    " h('div','I/O timeline: writes blue, FUA orange, flushes black, marks purple, the cut red."
    "',d);timeline(e,d);\n"
    " if(e.damage.length){h('h2','Blocks lost or damaged',d);const dt=h('table',null,d);"
    "dt.className='d';dt.id='damage';const hh=h('tr',null,dt);"
    "for(const k of ['block','what','inode','belongs to'])h('th',k,hh);\n"
    "  for(const b of e.damage){const tr=h('tr',null,dt);h('td',String(b.block),tr);"
    "h('td',b.what,tr);h('td',b.ino?String(b.ino):'',tr);h('td',b.owner,tr);}}}\n"
    "if(location.hash==='#selftest'){const cells=document.querySelectorAll('#heatmap-svg "
    ".cell');\n"
    " let pick=[...cells].find(g=>{const x=cellOf(g.dataset.row,g.dataset.col);"
    "return x&&x.example;})||cells[0];\n"
    " if(pick)pick.dispatchEvent(new MouseEvent('click',{bubbles:true}));\n"
    " const d=document.getElementById('drill');\n"
    " document.getElementById('selftest-result').textContent='selftest cells='+cells.length+"
    "' expected='+(M.rows.length*M.columns.length)+' drill='+(d.className==='open'?'open':"
    "'closed')+' timeline='+(document.getElementById('timeline')?'yes':'no')+"
    "' verdicts='+M.verdicts.length;}\n"
    "</script></body></html>\n";

/* The matrix JSON inside <script>: JSON allows '<' only within strings, where
 * \u003c means the same, so no name can close the script block. */
static int embed_json(const struct matrix *m, FILE *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	if (!mem)
		return -ENOMEM;
	int rc = matrix_write_json(m, mem);
	if (fclose(mem) != 0 && rc == 0)
		rc = -ENOMEM;
	for (size_t i = 0; rc == 0 && i < len; i++)
		if (buf[i] == '<')
			fputs("\\u003c", f);
		else
			fputc(buf[i], f);
	free(buf);
	return rc;
}

int matrix_write_html(const struct matrix *m, FILE *f)
{
	fputs(page_head, f);
	int rc = embed_json(m, f);
	fputs(page_tail, f);
	return rc ? rc : ferror(f) ? -EIO : 0;
}

// The page's one stylesheet, served at /assets/plumb.css (CSP allows styles from 'self' only).
// Small screens first: tables scroll sideways inside their box, forms stack.
export const STYLESHEET = `
:root{color-scheme:light dark;--fg:#1b1f24;--muted:#5b6470;--bg:#fff;--line:#d8dde3;--accent:#2557d6;
--ok:#1a7f37;--warn:#9a6700;--bad:#cf222e;--chip:#eef1f4}
@media (prefers-color-scheme:dark){:root{--fg:#e6e9ec;--muted:#9aa4ae;--bg:#111418;--line:#2d333b;
--accent:#6d9bff;--ok:#3fb950;--warn:#d29922;--bad:#f85149;--chip:#1f242b}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;justify-content:space-between;
padding:.6rem 1rem;border-bottom:1px solid var(--line)}
header a.brand{font-weight:700;text-decoration:none;color:var(--fg)}
header form{margin:0}
main{padding:1rem;max-width:90rem;margin:0 auto}
h1{font-size:1.3rem;margin:.2rem 0 .8rem;word-break:break-all}
h2{font-size:1.05rem;margin:1.6rem 0 .5rem}
a{color:var(--accent)}
.muted{color:var(--muted)}
.scroll{overflow-x:auto;border:1px solid var(--line);border-radius:6px}
table{border-collapse:collapse;width:100%;font-size:.92rem}
th,td{text-align:left;padding:.4rem .6rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-weight:600;white-space:nowrap;background:var(--chip)}
tr:last-child td{border-bottom:0}
td.msg{min-width:16rem;overflow-wrap:anywhere}
td.src{min-width:12rem;max-width:24rem}
td.src code{word-break:normal;overflow-wrap:anywhere}
code{font:.88em ui-monospace,SFMono-Regular,Menlo,monospace;word-break:break-all}
.badge{display:inline-block;padding:0 .45rem;border-radius:1rem;font-size:.78rem;font-weight:600;
background:var(--chip);white-space:nowrap;margin:0 .2rem .2rem 0}
.b-held{color:var(--warn);border:1px solid var(--warn)}
.b-frozen{color:var(--accent);border:1px dashed var(--accent)}
.b-failed{color:var(--bad);border:1px solid var(--bad)}
.b-drifted{color:var(--accent);border:1px solid var(--accent)}
.s-Synced,.s-Healthy,.s-Succeeded,.s-True{color:var(--ok)}
.s-OutOfSync,.s-Held,.s-Progressing,.s-Running,.s-Suspended{color:var(--warn)}
.s-Degraded,.s-Failed,.s-Missing,.s-False,.s-Warning{color:var(--bad)}
form.filters,form.inline{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end;margin:0 0 1rem}
label{display:flex;flex-direction:column;font-size:.85rem;gap:.2rem}
input,select,button{font:inherit;padding:.45rem .6rem;border:1px solid var(--line);border-radius:6px;
background:var(--bg);color:var(--fg);max-width:100%}
button{cursor:pointer;background:var(--chip);font-weight:600}
button.primary{background:var(--accent);border-color:var(--accent);color:#fff}
button.danger{color:var(--bad);border-color:var(--bad)}
.actions{display:flex;flex-wrap:wrap;gap:.6rem;align-items:end}
.actions form{margin:0}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem;margin:0}
dt{color:var(--muted)}
dd{margin:0;overflow-wrap:anywhere}
.notice{padding:.6rem .8rem;border-radius:6px;border:1px solid var(--line);background:var(--chip);margin:0 0 1rem}
.notice.error{border-color:var(--bad)}
.preview li{margin:.15rem 0}
.login{max-width:24rem;margin:3rem auto}
.login form{display:flex;flex-direction:column;gap:.8rem}
@media (max-width:40rem){main{padding:.7rem}dl{grid-template-columns:1fr}dt{margin-top:.4rem}}
`;

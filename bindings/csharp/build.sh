#!/usr/bin/env bash
# Builds the C# binding with mono's mcs into bindings/csharp/out/:
#   ShapePoly.dll   the binding (src/*.cs)
#   MlpTool.exe     the cross-language MLP tool (tools/MlpTool.cs; tests/cross_language/MLP_CONTRACT.md)
#   TestRunner.exe  the tests (tests/*.cs), printing 'N passed, M failed' last
# Run them with LD_LIBRARY_PATH pointing at the staged library (make lib -> build/lib):
#   LD_LIBRARY_PATH=build/lib mono bindings/csharp/out/MlpTool.exe export mlp.shpoly
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p out
MCS="mcs -nologo -langversion:7.2 -warnaserror+"
$MCS -target:library -doc:out/ShapePoly.xml -nowarn:1591 -out:out/ShapePoly.dll src/*.cs
$MCS -out:out/MlpTool.exe -r:out/ShapePoly.dll tools/MlpTool.cs
$MCS -out:out/TestRunner.exe -main:TestRunner -r:out/ShapePoly.dll tests/*.cs tools/MlpTool.cs

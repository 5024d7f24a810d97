# Build the Windows one-folder app with PyInstaller, in a venv of its own (PyInstaller never enters the
# project's environment), then check that the console program starts headless and answers.
#
#   powershell -ExecutionPolicy Bypass -File packaging\build.ps1
#   -> dist\pairwise\pairwise.exe (console) and dist\pairwise\pairwise-tray.exe (tray, no console)
$ErrorActionPreference = "Stop"
$Root = Resolve-Path "$PSScriptRoot\.."
$Build = if ($env:BUILD_DIR) { $env:BUILD_DIR } else { "$Root\build\pyinstaller" }
$Venv = "$Build\venv"
$Python = if ($env:PYTHON) { $env:PYTHON } else { "python" }

New-Item -ItemType Directory -Force -Path $Build | Out-Null
if (-not (Test-Path "$Venv\Scripts\python.exe")) { & $Python -m venv $Venv }
& "$Venv\Scripts\python.exe" -m pip install --quiet --upgrade pip
& "$Venv\Scripts\python.exe" -m pip install --quiet "$Root" "pyinstaller>=6.6"

Set-Location $Root
& "$Venv\Scripts\pyinstaller.exe" --noconfirm --clean --workpath "$Build\work" --distpath "$Root\dist" packaging\pairwise.spec
if ($LASTEXITCODE -ne 0) { throw "PyInstaller failed" }

# The built console program: start a node with a throwaway home, ask its front door, stop it.
$Home_ = Join-Path ([System.IO.Path]::GetTempPath()) ("pairwise-check-" + [guid]::NewGuid())
$env:PAIRWISE_MDNS = "off"
$Log = "$Home_.log"
$Node = Start-Process -FilePath "$Root\dist\pairwise\pairwise.exe" -PassThru -NoNewWindow -RedirectStandardOutput $Log `
    -ArgumentList @("--home", $Home_, "serve", "--listen", "127.0.0.1:0", "--cluster-listen", "127.0.0.1:0", "--name", "built-check")
try {
    $Address = $null
    for ($i = 0; $i -lt 150 -and -not $Address; $i++) {
        Start-Sleep -Milliseconds 200
        if ($Node.HasExited) { Get-Content $Log; throw "the built app exited" }
        $Match = Select-String -Path $Log -Pattern "serving on http://([0-9.:]+)" -ErrorAction SilentlyContinue
        if ($Match) { $Address = $Match.Matches[0].Groups[1].Value }
    }
    if (-not $Address) { Get-Content $Log; throw "the built app did not start" }
    $Version = Invoke-RestMethod "http://$Address/api/version"
    Write-Output "front door http://$Address answers /api/version: $($Version.version)"
} finally {
    if (-not $Node.HasExited) { Stop-Process -Id $Node.Id }
}

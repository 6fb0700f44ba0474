// GhIPSS institution codes: the first three digits of the sort code plus "100".
export const GHIPSS_BANKS: Readonly<Record<string, string>> = {
  '010100': 'Bank of Ghana',
  '020100': 'Standard Chartered',
  '030100': 'Absa',
  '040100': 'GCB',
  '050100': 'NIB',
  '060100': 'UBA',
  '070100': 'Apex',
  '080100': 'ADB',
  '090100': 'Societe Generale',
  '100100': 'UMB',
  '110100': 'Republic',
  '120100': 'Zenith',
  '130100': 'Ecobank',
  '140100': 'CAL',
  '170100': 'First Atlantic',
  '180100': 'Prudential',
  '190100': 'Stanbic',
  '200100': 'FBN',
  '210100': 'Bank of Africa',
  '230100': 'GTBank',
  '240100': 'Fidelity',
  '280100': 'Access',
  '330100': 'FNB',
  '340100': 'CBG',
  '360100': 'OmniBSIC',
  '390100': 'GHL',
};

export function isGhipssCode(code: string): boolean {
  return Object.hasOwn(GHIPSS_BANKS, code);
}

export function bankName(code: string): string | undefined {
  return isGhipssCode(code) ? GHIPSS_BANKS[code] : undefined;
}

import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiProperty, ApiTags } from '@nestjs/swagger';
import { GPU_CATALOG, GPU_MODELS, GpuModel } from '../catalog/catalog';
import { Roles } from '../platform/auth/decorators';

export class MigProfileView {
  @ApiProperty({ example: '1g.10gb' }) profile!: string;
  @ApiProperty({ example: 1, description: 'Compute slices of the 7 of an 80 GB card' })
  computeSlices!: number;
}

export class GpuTypeView {
  @ApiProperty({ enum: GPU_MODELS }) gpuType!: GpuModel;
  @ApiProperty({ description: 'vCPUs per node' }) vcpu!: number;
  @ApiProperty({ description: 'GiB of memory per node' }) memoryGiB!: number;
  @ApiProperty({ description: 'GiB of GPU memory per card (or MIG slice)' }) gpuMemoryGiB!: number;
  @ApiProperty({ type: MigProfileView, nullable: true }) mig!: MigProfileView | null;
}

export class GpuTypeList {
  @ApiProperty({ type: [GpuTypeView] }) items!: GpuTypeView[];
}

/** The catalog as the API shows it: one list, the same the pools and the provisioner use. */
export const gpuTypes = (): GpuTypeList => ({
  items: GPU_MODELS.map((gpuType) => {
    const t = GPU_CATALOG[gpuType];
    return {
      gpuType,
      vcpu: t.cpu,
      memoryGiB: t.memoryGiB,
      gpuMemoryGiB: t.cardGiB,
      mig: t.mig ? { ...t.mig } : null,
    };
  }),
});

@ApiTags('node-pools')
@ApiBearerAuth()
@Controller('v1/gpu-types')
export class GpuTypesController {
  /** Any authenticated caller: the console shows it on the pool form. */
  @Get()
  @Roles('admin', 'operator', 'user', 'auditor')
  @ApiOkResponse({ type: GpuTypeList })
  list(): GpuTypeList {
    return gpuTypes();
  }
}
